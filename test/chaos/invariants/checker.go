/*
Copyright 2026 The Koordinator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package invariants

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
)

var (
	unitsGVR  = schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "queueunits"}
	quotasGVR = schema.GroupVersionResource{Group: eqv1alpha1.GroupName, Version: "v1alpha1", Resource: "elasticquotas"}
)

// Options configure a Checker.
type Options struct {
	// Namespace limits the pods, Jobs and QueueUnits watched; "" is all.
	Namespace string
	// Audit, when its Log is set, adds the check of QueueUnit writers.
	Audit AuditOptions
	// ControllersAudit, when its Log is set, judges the writes of
	// koord-queue-controllers' replicas (Jobs and QueueUnits) against their
	// own Lease the same way.
	ControllersAudit AuditOptions
}

// Checker watches a cluster and records every broken invariant.
type Checker struct {
	opts      Options
	clientset kubernetes.Interface

	// pods and units are judged against each other, so they come from
	// streams with an exact frontier; Jobs and quotas are only looked up.
	podStream, unitStream      *stream
	jobInformer, quotaInformer cache.SharedIndexInformer
	jobs                       cache.Store // the job informer's

	mu      sync.Mutex
	buffer  []event // watch events not yet applied, any order
	seq     int64
	quotas  map[string]quotaNode
	pods    map[string]podState
	units   map[string]unitState
	blind   []window                   // versions a stream did not see one by one
	byJob   map[string]map[string]bool // job -> unit keys
	unitsOf map[string]map[string]bool // job -> every unit key it ever had
	ran     map[string]bool            // jobs with a pod seen running
	running map[string]int             // job -> running pods
	live    map[string]int             // job -> live pods
	used    map[string]amounts         // quota -> requests of live pods
	held    map[string]amounts         // quota -> charges of units holding quota
	leaving map[string]amounts         // quota -> requests of pods being deleted
	open    map[string]bool            // violation episodes still true
	faults  []Fault
	// faultPeaks[i] is the peak held and used per quota while fault i was
	// the last one recorded.
	faultPeaks []faultPeak
	// leavingSince is when each quota's resource went above max counting
	// its pods being deleted (the start of an episode still open).
	leavingSince map[string]time.Time
	// unheldSince is when each job the webhook never saw (no created-at
	// stamp) began running with no unit holding quota, until the backstop
	// suspends it or its unit is admitted.
	unheldSince map[string]time.Time
	// versions are the resourceVersions each unit was seen at, in order.
	versions map[string][]int64
	// seen is every version of each unit the stream handed over, deletions
	// included, in order, with the unit's status there (unitAfter).
	seen     map[string][]seenVersion
	admitted []time.Time
	report   Report
	finished bool // Finish ran: the report is the caller's now
	// frontierFunc replaces the watches' frontier in tests.
	frontierFunc func() int64
}

// event is one watch event, applied in resourceVersion order.
type event struct {
	rv, seq int64
	seen    time.Time
	key     string
	pod     *podState  // a pod event (nil state: deleted)
	unit    *unitState // a unit event
	// status is a unit event's status, as JSON.
	status []byte
	isPod  bool
	// relist, when set, ends a window (relist.from, rv] that a stream
	// listed instead of watching: nothing in it is judged, and everything
	// is judged again at its end.
	relist *window
}

// window is a range (from, to] of resourceVersions a stream relisted.
type window struct {
	resource string
	from, to int64
	at       time.Time
}

// emptyChecker is a Checker with its model's maps made and nothing
// watched: New gives it streams, the model's tests feed it events.
func emptyChecker() *Checker {
	return &Checker{
		quotas: map[string]quotaNode{}, pods: map[string]podState{}, units: map[string]unitState{},
		byJob: map[string]map[string]bool{}, running: map[string]int{}, live: map[string]int{},
		used: map[string]amounts{}, leaving: map[string]amounts{}, held: map[string]amounts{}, open: map[string]bool{},
		leavingSince: map[string]time.Time{}, unheldSince: map[string]time.Time{}, versions: map[string][]int64{},
		seen: map[string][]seenVersion{}, unitsOf: map[string]map[string]bool{}, ran: map[string]bool{},
		jobs: cache.NewStore(cache.MetaNamespaceKeyFunc),
	}
}

// New builds a checker for the cluster of cfg; Start starts it.
func New(cfg *rest.Config, opts Options) (*Checker, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "koord-queue-chaos-invariants"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c := emptyChecker()
	c.opts, c.clientset = opts, cs
	typed := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(opts.Namespace))
	c.jobInformer = typed.Batch().V1().Jobs().Informer()
	c.jobs = c.jobInformer.GetStore()
	pods := cs.CoreV1().Pods(opts.Namespace)
	c.podStream = newStream("pods",
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return pods.List(ctx, o) },
		pods.Watch)
	units := dyn.Resource(unitsGVR).Namespace(opts.Namespace)
	c.unitStream = newStream("queueunits",
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return units.List(ctx, o) },
		units.Watch)
	// Quotas may live in any namespace (their names are what units use).
	c.quotaInformer = dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, "", nil).ForResource(quotasGVR).Informer()
	if err := c.addHandlers(); err != nil {
		return nil, err
	}
	return c, nil
}

// Start runs the watches until ctx ends and waits for their first lists.
func (c *Checker) Start(ctx context.Context) error {
	c.report.Started = time.Now()
	for _, inf := range []cache.SharedIndexInformer{c.quotaInformer, c.jobInformer} {
		go inf.Run(ctx.Done())
	}
	if !cache.WaitForCacheSync(ctx.Done(), c.quotaInformer.HasSynced, c.jobInformer.HasSynced) {
		return fmt.Errorf("invariants: watches did not sync: %w", ctx.Err())
	}
	// Pods are judged with their Job's quota: the streams start once Jobs
	// and quotas are known.
	for _, s := range []*stream{c.podStream, c.unitStream} {
		go s.run(ctx)
	}
	for _, s := range []*stream{c.podStream, c.unitStream} {
		select {
		case <-s.synced:
		case <-ctx.Done():
			return fmt.Errorf("invariants: %s were not listed: %w", s.resource, ctx.Err())
		}
	}
	go func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				c.apply(false)
			}
		}
	}()
	return nil
}

func (c *Checker) addHandlers() error {
	c.podStream.handle = func(key string, obj runtime.Object, rv int64) {
		ev := event{rv: rv, seen: time.Now(), key: key, isPod: true}
		if obj != nil {
			p, ok := obj.(*corev1.Pod)
			if !ok {
				return
			}
			s := podStateOf(p, c.jobQuota)
			ev.pod = &s
		}
		c.push(ev)
	}
	c.unitStream.handle = func(key string, obj runtime.Object, rv int64) {
		ev := event{rv: rv, seen: time.Now(), key: key}
		if obj != nil {
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				return
			}
			qu := &schedv1alpha1.QueueUnit{}
			if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, qu) != nil {
				return
			}
			s := unitStateOf(qu)
			ev.unit = &s
			ev.status, _ = json.Marshal(u.Object["status"])
		}
		c.push(ev)
	}
	for _, s := range []*stream{c.podStream, c.unitStream} {
		resource := s.resource
		s.relisted = func(from, to int64) {
			c.push(event{rv: to, seen: time.Now(), relist: &window{resource: resource, from: from, to: to, at: time.Now()}})
		}
	}
	quota := func(obj any, deleted bool) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		q := &eqv1alpha1.ElasticQuota{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, q) != nil {
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if deleted {
			delete(c.quotas, q.Name)
		} else {
			c.quotas[q.Name] = quotaNodeOf(q)
		}
	}
	_, err := c.quotaInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { quota(obj, false) },
		UpdateFunc: func(_, obj any) { quota(obj, false) },
		DeleteFunc: func(obj any) { quota(obj, true) },
	})
	return err
}

// jobQuota is the quota label of a Job (for pods that do not carry it).
func (c *Checker) jobQuota(key string) string {
	obj, ok, _ := c.jobs.GetByKey(key)
	if !ok {
		return ""
	}
	return obj.(*batchv1.Job).Labels[schedv1alpha1.QuotaNameLabel]
}

func (c *Checker) push(ev event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	ev.seq = c.seq
	if ev.relist != nil {
		// Known before anything in the window is applied: the stream's
		// frontier moves past it only after this.
		c.blind = append(c.blind, *ev.relist)
		if ev.relist.from > 0 {
			c.report.Relists = append(c.report.Relists, Relist{
				Resource: ev.relist.resource, At: ev.relist.at, FromResourceVersion: ev.relist.from, ToResourceVersion: ev.relist.to,
			})
		}
	}
	c.buffer = append(c.buffer, ev)
}

// inBlind: rv lies in a window some stream relisted, whose end is not
// applied yet; the state there mixes versions and is not judged.
func (c *Checker) inBlind(rv int64) bool {
	for _, w := range c.blind {
		if w.from < rv && rv <= w.to {
			return true
		}
	}
	return false
}

// endBlind closes the relisted window w and judges every job and quota
// again on the state at its end, which is whole.
func (c *Checker) endBlind(ev event) {
	w := *ev.relist
	for i := range c.blind {
		if c.blind[i] == w {
			c.blind = append(c.blind[:i], c.blind[i+1:]...)
			break
		}
	}
	if c.inBlind(ev.rv) {
		return // another window still covers this version
	}
	jobs := map[string]bool{}
	for j := range c.byJob {
		jobs[j] = true
	}
	for j := range c.live {
		jobs[j] = true
	}
	for j := range c.running {
		jobs[j] = true
	}
	for j := range jobs {
		c.checkJob(j, ev)
	}
	for q := range c.quotas {
		c.checkQuota(q, ev)
	}
}

// apply applies, in resourceVersion order, the buffered events that both
// watches have passed (so no earlier event of the other can still come);
// all of them when final.
func (c *Checker) apply(final bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finished {
		return
	}
	frontier := int64(1<<63 - 1)
	if !final {
		frontier = c.frontier()
	}
	sort.Slice(c.buffer, func(i, j int) bool {
		if c.buffer[i].rv != c.buffer[j].rv {
			return c.buffer[i].rv < c.buffer[j].rv
		}
		return c.buffer[i].seq < c.buffer[j].seq
	})
	n := 0
	for n < len(c.buffer) && c.buffer[n].rv <= frontier {
		switch {
		case c.buffer[n].relist != nil:
			c.endBlind(c.buffer[n])
		case c.buffer[n].isPod:
			c.applyPod(c.buffer[n])
		default:
			c.applyUnit(c.buffer[n])
		}
		n++
	}
	c.buffer = append(c.buffer[:0], c.buffer[n:]...)
}

// frontier is the resourceVersion both watches have passed.
func (c *Checker) frontier() int64 {
	if c.frontierFunc != nil {
		return c.frontierFunc()
	}
	return min(c.podStream.progress.Load(), c.unitStream.progress.Load())
}

func (c *Checker) applyPod(ev event) {
	c.report.PodEvents++
	old, had := c.pods[ev.key]
	if had {
		c.charge(old, -1)
	}
	if ev.pod == nil {
		delete(c.pods, ev.key)
		if had {
			// What it no longer uses may end an episode (terminating-excess).
			c.checkQuotas(old, ev)
		}
	} else {
		c.pods[ev.key] = *ev.pod
		c.charge(*ev.pod, 1)
		c.checkQuotas(*ev.pod, ev)
	}
	if had && old.job != "" {
		c.checkJob(old.job, ev)
	}
	if ev.pod != nil && ev.pod.job != "" && (!had || ev.pod.job != old.job) {
		c.checkJob(ev.pod.job, ev)
	}
}

func (c *Checker) charge(s podState, sign int64) {
	for _, q := range chain(c.quotas, s.quota) {
		switch {
		case s.live:
			c.amountsOf(c.used, q).add(s.requests, sign)
		case s.terminating:
			c.amountsOf(c.leaving, q).add(s.requests, sign)
		}
	}
	if s.job == "" {
		return
	}
	if s.live {
		c.live[s.job] += int(sign)
	}
	if s.running {
		c.running[s.job] += int(sign)
		c.ran[s.job] = true
	}
}

// hold adds (sign 1) or takes off (-1) what unit s holds on its quota's chain.
func (c *Checker) hold(s unitState, sign int64) {
	for _, q := range chain(c.quotas, s.quota) {
		c.amountsOf(c.held, q).add(s.charge, sign)
	}
}

func (c *Checker) amountsOf(m map[string]amounts, q string) amounts {
	if m[q] == nil {
		m[q] = amounts{}
	}
	return m[q]
}

// checkQuotas: the requests of live pods charged to each quota of the pod's
// chain stay within its max, per resource the max names, and so do the
// admissions of the units holding quota there; with the pods being deleted
// added, an excess is counted (not a violation).
func (c *Checker) checkQuotas(s podState, ev event) {
	for _, q := range chain(c.quotas, s.quota) {
		c.checkQuota(q, ev)
	}
}

func (c *Checker) checkQuota(q string, ev event) {
	if c.inBlind(ev.rv) {
		return
	}
	if node, ok := c.quotas[q]; ok {
		for r, max := range node.max {
			used := c.used[q][r]
			c.report.notePeak(q, r, used, max)
			c.episode(used > max, "quota-exceeded", q+"/"+string(r), ev,
				fmt.Sprintf("live pods of quota %s request %s=%dm, above its max %dm (pod %s)", q, r, used, max, ev.key))
			// What admissions charged, before any pod starts.
			held := c.held[q][r]
			c.report.noteHeldPeak(q, r, held, max)
			c.episode(held > max, "quota-overcharged", q+"/"+string(r), ev,
				fmt.Sprintf("units holding quota %s were admitted with %s=%dm, above its max %dm (event of %s)", q, r, held, max, ev.key))
			c.noteFaultPeak(q, r, used, held, max)
			c.checkLeaving(q, r, used+c.leaving[q][r] > max, ev.seen, ev)
		}
	}
}

func (c *Checker) applyUnit(ev event) {
	c.report.UnitEvents++
	if ev.unit != nil {
		c.versions[ev.key] = append(c.versions[ev.key], ev.rv)
	}
	c.seen[ev.key] = append(c.seen[ev.key], seenVersion{rv: ev.rv, status: ev.status, deleted: ev.unit == nil})
	old, had := c.units[ev.key]
	if had && holdsQuota(old.phase) {
		c.hold(old, -1)
	}
	if ev.unit != nil && holdsQuota(ev.unit.phase) {
		c.hold(*ev.unit, 1)
		for _, q := range chain(c.quotas, ev.unit.quota) {
			c.checkQuota(q, ev)
		}
	}
	if ev.unit == nil {
		delete(c.units, ev.key)
	} else {
		c.units[ev.key] = *ev.unit
		if ev.unit.job != "" {
			if c.byJob[ev.unit.job] == nil {
				c.byJob[ev.unit.job] = map[string]bool{}
			}
			c.byJob[ev.unit.job][ev.key] = true
			if c.unitsOf[ev.unit.job] == nil {
				c.unitsOf[ev.unit.job] = map[string]bool{}
			}
			c.unitsOf[ev.unit.job][ev.key] = true
		}
		if holdsQuota(ev.unit.phase) && (!had || !holdsQuota(old.phase)) {
			c.admitted = append(c.admitted, ev.seen)
		}
		if had && holdsQuota(old.phase) && holdsQuota(ev.unit.phase) && ev.unit.attempts > old.attempts && !c.inBlind(ev.rv) {
			// Only an admission adds an attempt to a unit holding quota: it
			// was admitted again without leaving its admission.
			c.report.addViolation(Violation{Kind: "admitted-again", At: ev.seen, ResourceVersion: ev.rv,
				Message: fmt.Sprintf("unit %s, holding quota (%s, attempt %d), was admitted again (%s, attempt %d) without leaving its admission",
					ev.key, old.phase, old.attempts, ev.unit.phase, ev.unit.attempts)})
		}
		if had && holdsQuota(old.phase) && !holdsQuota(ev.unit.phase) && !finished(ev.unit.phase) {
			// Evicted (preempted, reclaimed, out of time): back to waiting.
			c.report.Evictions++
		}
		if finished(ev.unit.phase) && (!had || (!holdsQuota(old.phase) && !finished(old.phase))) && c.inBlind(ev.rv) {
			// Admitted and done inside a relisted window: seen only done.
			c.report.AdmissionsInRelists++
		}
	}
	if had && old.job != "" {
		if ev.unit == nil {
			delete(c.byJob[old.job], ev.key)
		}
		c.checkJob(old.job, ev)
	}
	if ev.unit != nil && ev.unit.job != "" && (!had || old.job != ev.unit.job) {
		c.checkJob(ev.unit.job, ev)
	}
}

// checkJob: a job with running pods has a unit that holds quota; no job has
// two units holding quota at once; a job has no more live pods than its
// unit was admitted with.
func (c *Checker) checkJob(job string, ev event) {
	if c.inBlind(ev.rv) {
		return
	}
	var holding []string
	var replicas int64
	for key := range c.byJob[job] {
		if u := c.units[key]; holdsQuota(u.phase) {
			holding = append(holding, key+"("+string(u.phase)+")")
			replicas = u.replicas
		}
	}
	sort.Strings(holding)
	unadmitted := c.running[job] > 0 && len(holding) == 0
	missed := c.missedByWebhook(job)
	c.episode(unadmitted && !missed, "running-without-admission", job, ev,
		fmt.Sprintf("job %s has %d running pods and no unit holding quota (event of %s)", job, c.running[job], ev.key))
	c.checkUnheld(job, unadmitted && missed, ev.seen, ev)
	c.episode(len(holding) > 1, "admitted-twice", job, ev,
		fmt.Sprintf("job %s has %d units holding quota at once: %v", job, len(holding), holding))
	c.episode(len(holding) == 1 && int64(c.live[job]) > replicas, "more-pods-than-admitted", job, ev,
		fmt.Sprintf("job %s has %d live pods, its unit %s was admitted with %d", job, c.live[job], holding, replicas))
}

// UnheldBound is how long a job the webhook never saw (created while it was
// down: failurePolicy Ignore lets the API server store it as written) may
// run with no unit holding quota before the backstop has suspended it: the
// controllers' leader may be the replica that went down, so a lease (15 s)
// and a start pass before the backstop runs, then the pods' deletion.
const UnheldBound = time.Minute

// missedByWebhook: job carries no stamp of the admission webhook, which
// stamps every job it holds; one the checker has not seen is taken as
// stamped, so it is judged strictly.
func (c *Checker) missedByWebhook(job string) bool {
	obj, ok, _ := c.jobs.GetByKey(job)
	if !ok {
		return false
	}
	_, stamped := obj.(*batchv1.Job).Annotations[schedv1alpha1.CreatedAtAnnotation]
	return !stamped
}

// checkUnheld counts the jobs the webhook missed that ran unadmitted
// (allowed: the price of failurePolicy Ignore), and records a violation
// (backstop-late) when one runs so for longer than UnheldBound.
func (c *Checker) checkUnheld(job string, unheld bool, at time.Time, ev event) {
	since, ok := c.unheldSince[job]
	switch {
	case unheld && !ok:
		c.report.UnheldJobs++
		c.unheldSince[job], since, ok = at, at, true
	case !unheld:
		delete(c.unheldSince, job)
		ok = false
	}
	c.episode(ok && at.Sub(since) > UnheldBound, "backstop-late", job, ev,
		fmt.Sprintf("job %s, created while the webhook was down, has run with no unit holding quota since %s, longer than %s",
			job, since.Format(time.RFC3339), UnheldBound))
}

// judgeUnheldAtEnd judges the jobs still running unadmitted at the end.
func (c *Checker) judgeUnheldAtEnd() {
	for job, since := range c.unheldSince {
		c.episode(c.report.Ended.Sub(since) > UnheldBound, "backstop-late", job, event{seen: c.report.Ended},
			fmt.Sprintf("job %s, created while the webhook was down, ran with no unit holding quota from %s to the end of the run", job, since.Format(time.RFC3339)))
	}
}

// episode records a violation when cond becomes true for (kind, subject),
// once until it is false again.
func (c *Checker) episode(cond bool, kind, subject string, ev event, msg string) {
	k := kind + "/" + subject
	if cond && !c.open[k] {
		c.report.addViolation(Violation{Kind: kind, At: ev.seen, ResourceVersion: ev.rv, Message: msg})
	}
	c.open[k] = cond
}

// TerminatingBound is how long a quota may stay above its max counting its
// pods being deleted: the protocol lets a unit give its quota back once its
// pods are going, and they have their grace period (30 s by default) to go,
// plus the time the kubelet (kwok here) and the API take to remove them.
const TerminatingBound = time.Minute

// checkLeaving counts the times a quota's live pods and pods being deleted
// together go above max (allowed), and records a violation
// (terminating-excess) when such a time lasts longer than TerminatingBound.
func (c *Checker) checkLeaving(q string, r corev1.ResourceName, over bool, at time.Time, ev event) {
	k := "leaving/" + q + "/" + string(r)
	if over && !c.open[k] {
		c.report.OverMaxWithPodsBeingDeleted++
		c.leavingSince[k] = at
	}
	c.open[k] = over
	since, ok := c.leavingSince[k]
	if !over {
		delete(c.leavingSince, k)
		ok = false
	}
	if ok {
		c.report.noteLeaving(at.Sub(since))
	}
	c.episode(ok && at.Sub(since) > TerminatingBound, "terminating-excess", q+"/"+string(r), ev,
		fmt.Sprintf("quota %s has been above its max %s for %s counting its pods being deleted (since %s), longer than %s",
			q, r, at.Sub(since).Round(time.Second), since.Format(time.RFC3339), TerminatingBound))
}

// versionAt is the last resourceVersion unit was seen at up to revision
// rev (0 if none): a lower bound of the version it had then, as a relisted
// window may hide versions, never one it did not have yet.
func (c *Checker) versionAt(unit string, rev int64) int64 {
	vs := c.versions[unit]
	i := sort.Search(len(vs), func(i int) bool { return vs[i] > rev })
	if i == 0 {
		return 0
	}
	return vs[i-1]
}

// seenVersion is a version of a unit as the stream handed it over.
type seenVersion struct {
	rv      int64
	status  []byte // JSON
	deleted bool
}

// unitAfter returns the status of unit at the version that came right
// after version rv: both seen one after the other, with no relisted window
// between them that could hide a version. false when that is not known.
func (c *Checker) unitAfter(unit string, rv int64) ([]byte, bool) {
	vs := c.seen[unit]
	i := slices.IndexFunc(vs, func(v seenVersion) bool { return v.rv == rv })
	if i < 0 || i+1 >= len(vs) || vs[i].deleted || vs[i+1].deleted {
		return nil, false
	}
	next := vs[i+1].rv
	for _, w := range c.report.Relists {
		if w.Resource == unitsGVR.Resource && w.FromResourceVersion < next && w.ToResourceVersion > rv {
			return nil, false
		}
	}
	return vs[i+1].status, true
}

// judgeRanWithoutWrite: a job whose pods ran was resumed because its unit
// was admitted, and only a koord-queue replica admits: some unit of the job
// must have a write of a replica in the audit log (what chaos/j-00286 of an
// earlier run lacked, docs/reliability.md); unless the webhook missed it.
func (c *Checker) judgeRanWithoutWrite(written map[string]bool) {
	jobs := make([]string, 0, len(c.ran))
	for job := range c.ran {
		jobs = append(jobs, job)
	}
	sort.Strings(jobs)
	for _, job := range jobs {
		// A job the webhook missed may run, even to its end, before the
		// backstop sees it: UnheldBound judges how long.
		ok := c.missedByWebhook(job)
		for key := range c.unitsOf[job] {
			ok = ok || written[key]
		}
		if !ok {
			c.report.addViolation(Violation{Kind: "ran-without-admission-write", At: c.report.Ended,
				Message: fmt.Sprintf("job %s had running pods, and no koord-queue replica wrote any of its units %v", job, keys(c.unitsOf[job]))})
		}
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// judgeLeavingAtEnd judges the excesses still there at the end of the run.
func (c *Checker) judgeLeavingAtEnd() {
	for k, since := range c.leavingSince {
		subject := strings.TrimPrefix(k, "leaving/")
		c.episode(c.report.Ended.Sub(since) > TerminatingBound, "terminating-excess", subject, event{seen: c.report.Ended},
			fmt.Sprintf("%s above max counting its pods being deleted since %s, to the end of the run", subject, since.Format(time.RFC3339)))
	}
}

// faultPeak is the most held and used per quota while a fault was the last.
type faultPeak struct {
	held, used map[string]map[corev1.ResourceName]Peak
}

// noteFaultPeak notes held and used in the window of the last fault.
func (c *Checker) noteFaultPeak(q string, r corev1.ResourceName, used, held, max int64) {
	if len(c.faultPeaks) == 0 {
		return
	}
	p := &c.faultPeaks[len(c.faultPeaks)-1]
	p.held = notePeak(p.held, q, r, held, max)
	p.used = notePeak(p.used, q, r, used, max)
}

// RecordFault notes a fault injected now, for the admission gap figures and
// the peaks of its window, which start from what is held and used now.
func (c *Checker) RecordFault(kind, target string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.faults = append(c.faults, Fault{Kind: kind, Target: target, At: time.Now()})
	c.faultPeaks = append(c.faultPeaks, faultPeak{})
	for q, node := range c.quotas {
		for r, max := range node.max {
			c.noteFaultPeak(q, r, c.used[q][r], c.held[q][r], max)
		}
	}
}

// Evictions is how many units the checker has seen go from holding quota
// back to waiting.
func (c *Checker) Evictions() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.report.Evictions
}

// Held is what the units holding quota q were admitted with, of resource r,
// in milli-units, as far as the checker has applied events.
func (c *Checker) Held(q string, r corev1.ResourceName) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held[q][r]
}

// Admissions is how many admissions the checker has applied so far.
func (c *Checker) Admissions() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.admitted)
}

// Finish applies what is left, counts the Jobs (a Job neither Complete nor
// Failed is lost), reads the audit log when configured, and returns the
// report.
func (c *Checker) Finish(ctx context.Context) (*Report, error) {
	c.settle(ctx, settleLimit)
	c.apply(true)
	jobs, err := c.clientset.BatchV1().Jobs(c.opts.Namespace).List(ctx, listAll)
	if err != nil {
		return nil, fmt.Errorf("invariants: list jobs: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finished = true
	c.report.Ended = time.Now()
	c.report.JobsCreated = len(jobs.Items)
	for i := range jobs.Items {
		j := &jobs.Items[i]
		switch {
		case jobDone(j, batchv1.JobComplete):
			c.report.JobsDone++
		case jobDone(j, batchv1.JobFailed):
			c.report.JobsFailed++
		default:
			c.report.addViolation(Violation{Kind: "lost", At: c.report.Ended,
				Message: fmt.Sprintf("job %s/%s did not finish by the end of the run (unit phases %v)", j.Namespace, j.Name, c.unitPhases(j.Namespace+"/"+j.Name))})
		}
	}
	c.report.Admissions = len(c.admitted)
	c.judgeLeavingAtEnd()
	c.judgeUnheldAtEnd()
	c.report.Faults = faultFigures(c.faults, c.admitted, c.report.Ended)
	for i := range c.report.Faults {
		c.report.Faults[i].PeakHeld, c.report.Faults[i].PeakUse = c.faultPeaks[i].held, c.faultPeaks[i].used
	}
	if c.opts.Audit.Log != "" {
		o := c.opts.Audit
		if o.UnitVersionAt == nil {
			o.UnitVersionAt = c.versionAt
		}
		if o.UnitAfter == nil {
			o.UnitAfter = c.unitAfter
		}
		audit, vs, err := CheckAudit(o)
		if err != nil {
			return nil, err
		}
		c.report.Audit = audit
		for _, v := range vs {
			c.report.addViolation(v)
		}
		c.judgeRanWithoutWrite(audit.written)
	}
	if c.opts.ControllersAudit.Log != "" {
		audit, vs, err := CheckAudit(c.opts.ControllersAudit)
		if err != nil {
			return nil, err
		}
		c.report.ControllersAudit = audit
		for _, v := range vs {
			c.report.addViolation(v)
		}
	}
	r := c.report
	return &r, nil
}

// settleLimit bounds the wait of Finish for the watches to agree: a quiet
// watch moves its frontier on the API server's bookmarks, about once a minute.
const settleLimit = 90 * time.Second

// settle applies buffered events as both watches pass them, until none is
// left, ctx ends or limit passes. An event applied before the other watch
// has caught up could be judged against a stale view of that watch (a pod
// running before its unit's admission arrived); the rest, if any, are
// applied by the final apply and counted in the report.
func (c *Checker) settle(ctx context.Context, limit time.Duration) {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		c.apply(false)
		c.mu.Lock()
		left := len(c.buffer)
		c.report.UnsettledEvents = left
		c.mu.Unlock()
		if left == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		case <-tick.C:
		}
	}
}

func (c *Checker) unitPhases(job string) []string {
	var out []string
	for key := range c.byJob[job] {
		out = append(out, key+"="+string(c.units[key].phase))
	}
	sort.Strings(out)
	return out
}

func jobDone(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, cond := range j.Status.Conditions {
		if cond.Type == t && cond.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
