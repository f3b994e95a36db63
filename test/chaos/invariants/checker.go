package invariants

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
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
}

// Checker watches a cluster and records every broken invariant.
type Checker struct {
	opts      Options
	clientset kubernetes.Interface

	podInformer, jobInformer, unitInformer, quotaInformer cache.SharedIndexInformer

	mu       sync.Mutex
	buffer   []event // watch events not yet applied, any order
	seq      int64
	quotas   map[string]quotaNode
	pods     map[string]podState
	units    map[string]unitState
	byJob    map[string]map[string]bool // job -> unit keys
	running  map[string]int             // job -> running pods
	live     map[string]int             // job -> live pods
	used     map[string]amounts         // quota -> requests of live pods
	leaving  map[string]amounts         // quota -> requests of pods being deleted
	open     map[string]bool            // violation episodes still true
	faults   []Fault
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
	isPod   bool
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
	c := &Checker{
		opts: opts, clientset: cs,
		quotas: map[string]quotaNode{}, pods: map[string]podState{}, units: map[string]unitState{},
		byJob: map[string]map[string]bool{}, running: map[string]int{}, live: map[string]int{},
		used: map[string]amounts{}, leaving: map[string]amounts{}, open: map[string]bool{},
	}
	typed := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(opts.Namespace))
	c.podInformer = typed.Core().V1().Pods().Informer()
	c.jobInformer = typed.Batch().V1().Jobs().Informer()
	dynf := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, opts.Namespace, nil)
	c.unitInformer = dynf.ForResource(unitsGVR).Informer()
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
	for _, inf := range []cache.SharedIndexInformer{c.quotaInformer, c.jobInformer, c.podInformer, c.unitInformer} {
		go inf.Run(ctx.Done())
	}
	if !cache.WaitForCacheSync(ctx.Done(), c.quotaInformer.HasSynced, c.jobInformer.HasSynced, c.podInformer.HasSynced, c.unitInformer.HasSynced) {
		return fmt.Errorf("invariants: watches did not sync: %w", ctx.Err())
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
	pod := func(obj any, deleted bool) {
		p, rv, ok := decodePod(obj, c.podInformer)
		if !ok {
			return
		}
		ev := event{rv: rv, seen: time.Now(), key: p.Namespace + "/" + p.Name, isPod: true}
		if !deleted {
			s := podStateOf(p, c.jobQuota)
			ev.pod = &s
		}
		c.push(ev)
	}
	unit := func(obj any, deleted bool) {
		u, rv, ok := decodeUnit(obj, c.unitInformer)
		if !ok {
			return
		}
		ev := event{rv: rv, seen: time.Now(), key: u.Namespace + "/" + u.Name}
		if !deleted {
			s := unitStateOf(u)
			ev.unit = &s
		}
		c.push(ev)
	}
	quota := func(obj any, deleted bool) {
		u, ok := unwrap(obj).(*unstructured.Unstructured)
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
	for inf, f := range map[cache.SharedIndexInformer]func(any, bool){c.podInformer: pod, c.unitInformer: unit, c.quotaInformer: quota} {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { f(obj, false) },
			UpdateFunc: func(_, obj any) { f(obj, false) },
			DeleteFunc: func(obj any) { f(obj, true) },
		}); err != nil {
			return err
		}
	}
	return nil
}

func unwrap(obj any) any {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return d.Obj
	}
	return obj
}

// rvOf is the object's resourceVersion as a number; a deletion seen only
// through a relist takes the informer's list version instead.
func rvOf(obj any, meta string, inf cache.SharedIndexInformer) int64 {
	if _, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		meta = inf.LastSyncResourceVersion()
	}
	n, _ := strconv.ParseInt(meta, 10, 64)
	return n
}

func decodePod(obj any, inf cache.SharedIndexInformer) (*corev1.Pod, int64, bool) {
	p, ok := unwrap(obj).(*corev1.Pod)
	if !ok {
		return nil, 0, false
	}
	return p, rvOf(obj, p.ResourceVersion, inf), true
}

func decodeUnit(obj any, inf cache.SharedIndexInformer) (*schedv1alpha1.QueueUnit, int64, bool) {
	u, ok := unwrap(obj).(*unstructured.Unstructured)
	if !ok {
		return nil, 0, false
	}
	qu := &schedv1alpha1.QueueUnit{}
	if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, qu) != nil {
		return nil, 0, false
	}
	return qu, rvOf(obj, qu.ResourceVersion, inf), true
}

// jobQuota is the quota label of a Job (for pods that do not carry it).
func (c *Checker) jobQuota(key string) string {
	obj, ok, _ := c.jobInformer.GetStore().GetByKey(key)
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
	c.buffer = append(c.buffer, ev)
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
		if c.buffer[n].isPod {
			c.applyPod(c.buffer[n])
		} else {
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
	f := int64(1<<63 - 1)
	for _, inf := range []cache.SharedIndexInformer{c.podInformer, c.unitInformer} {
		n, _ := strconv.ParseInt(inf.LastSyncResourceVersion(), 10, 64)
		f = min(f, n)
	}
	return f
}

func (c *Checker) applyPod(ev event) {
	c.report.PodEvents++
	old, had := c.pods[ev.key]
	if had {
		c.charge(old, -1)
	}
	if ev.pod == nil {
		delete(c.pods, ev.key)
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
	}
}

func (c *Checker) amountsOf(m map[string]amounts, q string) amounts {
	if m[q] == nil {
		m[q] = amounts{}
	}
	return m[q]
}

// checkQuotas: the requests of live pods charged to each quota of the pod's
// chain stay within its max, per resource the max names; with the pods
// being deleted added, an excess is counted (not a violation).
func (c *Checker) checkQuotas(s podState, ev event) {
	for _, q := range chain(c.quotas, s.quota) {
		node, ok := c.quotas[q]
		if !ok {
			continue
		}
		for r, max := range node.max {
			used := c.used[q][r]
			c.report.notePeak(q, r, used, max)
			c.episode(used > max, "quota-exceeded", q+"/"+string(r), ev,
				fmt.Sprintf("live pods of quota %s request %s=%dm, above its max %dm (pod %s)", q, r, used, max, ev.key))
			over := used+c.leaving[q][r] > max
			if over && !c.open["leaving/"+q+"/"+string(r)] {
				c.report.OverMaxWithPodsBeingDeleted++
			}
			c.open["leaving/"+q+"/"+string(r)] = over
		}
	}
}

func (c *Checker) applyUnit(ev event) {
	c.report.UnitEvents++
	old, had := c.units[ev.key]
	if ev.unit == nil {
		delete(c.units, ev.key)
	} else {
		c.units[ev.key] = *ev.unit
		if ev.unit.job != "" {
			if c.byJob[ev.unit.job] == nil {
				c.byJob[ev.unit.job] = map[string]bool{}
			}
			c.byJob[ev.unit.job][ev.key] = true
		}
		if holdsQuota(ev.unit.phase) && (!had || !holdsQuota(old.phase)) {
			c.admitted = append(c.admitted, ev.seen)
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
	var holding []string
	var replicas int64
	for key := range c.byJob[job] {
		if u := c.units[key]; holdsQuota(u.phase) {
			holding = append(holding, key+"("+string(u.phase)+")")
			replicas = u.replicas
		}
	}
	sort.Strings(holding)
	c.episode(c.running[job] > 0 && len(holding) == 0, "running-without-admission", job, ev,
		fmt.Sprintf("job %s has %d running pods and no unit holding quota (event of %s)", job, c.running[job], ev.key))
	c.episode(len(holding) > 1, "admitted-twice", job, ev,
		fmt.Sprintf("job %s has %d units holding quota at once: %v", job, len(holding), holding))
	c.episode(len(holding) == 1 && int64(c.live[job]) > replicas, "more-pods-than-admitted", job, ev,
		fmt.Sprintf("job %s has %d live pods, its unit %s was admitted with %d", job, c.live[job], holding, replicas))
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

// RecordFault notes a fault injected now, for the admission gap figures.
func (c *Checker) RecordFault(kind, target string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.faults = append(c.faults, Fault{Kind: kind, Target: target, At: time.Now()})
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
	c.report.Faults = faultFigures(c.faults, c.admitted, c.report.Ended)
	if c.opts.Audit.Log != "" {
		audit, vs, err := CheckAudit(c.opts.Audit)
		if err != nil {
			return nil, err
		}
		c.report.Audit = audit
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
