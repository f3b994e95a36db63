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

package elasticquota

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
)

// Plugin is ElasticQuotaV2.
type Plugin struct {
	h framework.Handle

	mu   sync.Mutex
	tree *quota.Tree
	// victims and heldRoom read the tree, under mu.
	victims  *quota.VictimSelector
	heldRoom *quota.HeldRoom
	// charged is what each unit holds, and where; byQuota indexes it.
	charged map[schedtypes.UnitKey]schedtypes.Holding
	byQuota map[schedtypes.QuotaName]map[schedtypes.UnitKey]struct{}
	// gone are the units deleted from the API whose charge is kept while
	// their pods are there (gone.go).
	gone map[schedtypes.UnitKey]struct{}
	// protection keeps recently admitted units from reclaim.
	protection time.Duration
	now        func() time.Time
	// versions count changes of what units hold, by cohort; noVictims
	// remembers, by quota, the last search that found nobody to evict, so
	// the same search is not repeated until something changed.
	versions  map[schedtypes.CohortName]uint64
	noVictims map[schedtypes.QuotaName]victimSearch
	// changes count changes of what units hold, by quota (RefusalChecker);
	// notes are those changes not yet told to the queues (notes.go).
	changes map[schedtypes.QuotaName]uint64
	notes   []holdingNote
	// listed counts writes of p.charged by quota, same charges too: a
	// quota's list in heldByCohort is built again when it moved.
	listed map[schedtypes.QuotaName]uint64
	// heldByCohort keeps the holdings of each cohort for victim searches
	// (cohortHoldingsLocked).
	heldByCohort map[schedtypes.CohortName]cohortHeld
	// quotas are the ElasticQuotas seen, by name: of two of one name in
	// different namespaces, the one that counts (sameName).
	quotas   map[schedtypes.QuotaName]*eqv1alpha1.ElasticQuota
	sameName *quota.SameNames
	// sameNameReported is the warning last given to each ignored quota of a
	// name used twice (namespace/name), so it is given once.
	sameNameReported map[string]string
	// shared lets any namespace use any quota (args sharedQuotas).
	shared bool
	// treeReported is the tree problem last reported on each quota (event
	// InvalidQuotaTree), so it is reported once.
	treeReported map[schedtypes.QuotaName]string
	// minReported is the children's-min problem last reported on each
	// parent quota (event InvalidQuotaMin), so it is said once.
	minReported map[schedtypes.QuotaName]string

	// foreign is the usage of pods koord-queue does not manage (pods.go).
	foreign *foreignPods

	// follow builds the tree from the ElasticQuotas and reports on them.
	follow *follower
}

// follower follows the ElasticQuotas for the plugin: it builds the quota
// tree from the objects (under the plugin's lock) and says what is wrong
// with them in events. Their Queues are pkg/quotaqueues'.
type follower struct {
	p             *Plugin
	queue         workqueue.TypedRateLimitingInterface[string]
	registrations []toolscache.ResourceEventHandlerRegistration
}

var (
	_ framework.QueueMapPlugin = (*Plugin)(nil)
	_ framework.FilterPlugin   = (*Plugin)(nil)
	_ framework.ReservePlugin  = (*Plugin)(nil)
	_ framework.UsagePlugin    = (*Plugin)(nil)
	_ framework.PreemptPlugin  = (*Plugin)(nil)
	_ framework.Runnable       = (*Plugin)(nil)
	_ framework.Syncer         = (*Plugin)(nil)
	_ framework.QuotaLister    = (*Plugin)(nil)
	_ framework.SharePlugin    = (*Plugin)(nil)
)

// HasSynced is true once every ElasticQuota and every pod has been seen.
func (p *Plugin) HasSynced() bool {
	for _, r := range p.follow.registrations {
		if !r.HasSynced() {
			return false
		}
	}
	return true
}

// New builds the plugin from its arguments (configv1.ElasticQuotaArgs, read
// strictly; unset fields take the plugin's defaults) and registers its
// informers.
func New(raw runtime.RawExtension, h framework.Handle) (framework.Plugin, error) {
	args, err := configv1.DecodeElasticQuotaArgs(raw.Raw)
	if err != nil {
		return nil, err
	}
	p := newPlugin(args, h)
	if err := p.follow.watch(context.Background()); err != nil { //nolint:forbidigo // set up before the manager starts: no caller context exists yet
		return nil, err
	}
	if err := p.watchPods(context.Background()); err != nil { //nolint:forbidigo // set up before the manager starts: no caller context exists yet
		return nil, err
	}
	return p, nil
}

// newPlugin builds the plugin's state from decoded arguments, without
// informers.
func newPlugin(args *configv1.ElasticQuotaArgs, h framework.Handle) *Plugin {
	args = args.DeepCopy()
	args.SetDefaults()
	p := &Plugin{shared: args.SharedQuotas,
		h: h, tree: quota.New(*args.OversellRate), charged: map[schedtypes.UnitKey]schedtypes.Holding{}, gone: map[schedtypes.UnitKey]struct{}{}, byQuota: map[schedtypes.QuotaName]map[schedtypes.UnitKey]struct{}{},
		protection: args.ReclaimProtectionPeriod.Duration, now: h.Clock().Now,
		versions: map[schedtypes.CohortName]uint64{}, noVictims: map[schedtypes.QuotaName]victimSearch{}, changes: map[schedtypes.QuotaName]uint64{}, listed: map[schedtypes.QuotaName]uint64{},
		quotas: map[schedtypes.QuotaName]*eqv1alpha1.ElasticQuota{}, treeReported: map[schedtypes.QuotaName]string{}, minReported: map[schedtypes.QuotaName]string{},
		foreign: newForeignPods(), sameName: quota.NewSameNames(), sameNameReported: map[string]string{},
	}
	p.victims, p.heldRoom = quota.NewVictimSelector(p.tree), quota.NewHeldRoom(p.tree)
	p.follow = &follower{p: p, queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "elasticquota-reports"})}
	return p
}

// watch registers the handlers of ElasticQuotas.
func (s *follower) watch(ctx context.Context) error {
	eqInformer, err := s.p.h.Cache().GetInformer(ctx, &eqv1alpha1.ElasticQuota{})
	if err != nil {
		return fmt.Errorf("watch ElasticQuotas (is the ElasticQuota CRD of scheduling.sigs.k8s.io installed?): %w", err)
	}
	reg, err := eqInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.onQuota(obj) },
		UpdateFunc: func(_, obj any) { s.onQuota(obj) },
		DeleteFunc: s.onQuotaDelete,
	})
	if err != nil {
		return err
	}
	s.registrations = append(s.registrations, reg)
	return nil
}

// Name is ElasticQuotaV2.
func (*Plugin) Name() string { return configv1.PluginElasticQuotaV2 }

// Map puts a unit in the queue of its quota: the quota label, else spec.queue.
func (*Plugin) Map(u *schedv1alpha1.QueueUnit) (schedtypes.QueueName, schedtypes.QuotaName) {
	name := u.Labels[schedv1alpha1.QuotaNameLabel]
	if name == "" {
		name = u.Spec.Queue
	}
	return schedtypes.QueueName(name), schedtypes.QuotaName(name)
}

// Cohort is the top-level quota above quotaName.
func (p *Plugin) Cohort(quotaName schedtypes.QuotaName) schedtypes.CohortName {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tree.Cohort(quotaName)
}

// Filter admits a unit only when it fits its quota and every ancestor.
func (p *Plugin) Filter(_ context.Context, u *framework.UnitInfo) *framework.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	if u.Quota == "" {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, schedtypes.Reason{Kind: schedtypes.WaitNoQuota},
			"the unit names no quota: set the label "+schedv1alpha1.QuotaNameLabel+" on its job")
	}
	// Koordinator's own quotas and parent quotas take no unit, whoever asks.
	if s := p.tree.Problem(u.Quota); s != nil && (s.System || s.Parent) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, s.Reason(), s.Message())
	}
	if s := tenancyLocked(p, u); s != nil {
		return s
	}
	s := p.tree.Check(u.Quota, u.Request)
	if s == nil {
		if h := p.heldRoom.Check(u.Quota, u.Request, u.Beside); h != nil {
			return framework.NewStatus(framework.Unschedulable, h.Reason(), h.Message())
		}
		return nil
	}
	code := framework.Unschedulable
	if s.NeverFits {
		code = framework.UnschedulableAndUnresolvable
	}
	return framework.NewStatus(code, s.Reason(), s.Message())
}

// Reserve charges the unit's request to its quota path.
func (p *Plugin) Reserve(_ context.Context, u *framework.UnitInfo) *framework.Status {
	p.mu.Lock()
	if s := p.tree.Check(u.Quota, u.Request); s != nil {
		p.mu.Unlock()
		return framework.NewStatus(framework.Unschedulable, s.Reason(), s.Message())
	}
	h := &schedtypes.Holding{Key: u.Key, Quota: u.Quota, Used: u.Request, Priority: u.Priority, AllocatedAt: p.now()}
	if u.Unit != nil && u.Unit.Spec.ConsumerRef != nil {
		h.Consumer = u.Unit.Spec.ConsumerRef.UID
	}
	p.setLocked(u.Key, h)
	p.applyForeignLocked()
	notes := p.takeNotesLocked()
	p.mu.Unlock()
	p.tellHoldings(notes)
	return nil
}

// Unreserve gives back what Reserve charged.
func (p *Plugin) Unreserve(_ context.Context, u *framework.UnitInfo) {
	p.mu.Lock()
	p.setLocked(u.Key, nil)
	more := p.flushForeignLocked()
	notes := p.takeNotesLocked()
	p.mu.Unlock()
	p.tellHoldings(notes)
	p.tellFreed(more)
}

// SetUsage records what a unit holds, as read from the API. A unit made
// again under the name of a deleted one whose pods are still there (the
// extension makes a unit for its job again at once) takes the tombstone over
// only once it holds quota itself.
func (p *Plugin) SetUsage(key schedtypes.UnitKey, h *schedtypes.Holding) {
	p.mu.Lock()
	if _, ok := p.gone[key]; ok {
		if h == nil || h.Quota == "" || h.Used.IsZero() {
			p.mu.Unlock()
			return
		}
		delete(p.gone, key)
	}
	p.setLocked(key, h)
	more := p.flushForeignLocked()
	notes := p.takeNotesLocked()
	p.mu.Unlock()
	p.tellHoldings(notes)
	p.tellFreed(more)
}

// setLocked moves a unit's charge; the change, with any room given back, is
// noted for the queues (noteLocked), and the caller tells them once it
// releases p.mu. A unit that starts or stops
// holding quota takes its pods into, or gives them back to, the foreign
// usage; a following flushForeignLocked sets it on the tree.
func (p *Plugin) setLocked(key schedtypes.UnitKey, h *schedtypes.Holding) {
	wasHolding := p.holdsLocked(key)
	defer func() {
		if p.holdsLocked(key) != wasHolding {
			p.unitHoldingChangedLocked(key)
		}
	}()
	prev, had := p.charged[key]
	// A unit's status is read again on every write to it; when what it
	// holds is recorded unchanged, a fruitless victim search stays true.
	if !had || h == nil || !sameCharge(prev, *h) {
		if had {
			p.versions[p.tree.Cohort(prev.Quota)]++
			p.changes[prev.Quota]++
		}
		if h != nil {
			p.versions[p.tree.Cohort(h.Quota)]++
			p.changes[h.Quota]++
		}
	}
	if h != nil && (h.Quota == "" || h.Used.IsZero()) {
		h = nil
	}
	p.noteLocked(prev, had, h)
	if had {
		p.listed[prev.Quota]++
	}
	if h != nil && (!had || h.Quota != prev.Quota) {
		p.listed[h.Quota]++
	}
	if had && h != nil && prev.Quota == h.Quota && prev.Used.Equal(h.Used) {
		// Same charge; only what victim selection reads may have changed.
		p.charged[key] = *h
		p.consumerChangedLocked(key, prev.Consumer, h.Consumer)
		return
	}
	if had {
		p.tree.Release(prev.Quota, prev.Used)
		delete(p.charged, key)
		if set := p.byQuota[prev.Quota]; set != nil {
			delete(set, key)
			if len(set) == 0 {
				delete(p.byQuota, prev.Quota)
			}
		}
	}
	if h != nil {
		c := *h
		c.Key, c.Used = key, h.Used.Clone()
		p.tree.Charge(c.Quota, c.Used)
		p.charged[key] = c
		if p.byQuota[c.Quota] == nil {
			p.byQuota[c.Quota] = map[schedtypes.UnitKey]struct{}{}
		}
		p.byQuota[c.Quota][key] = struct{}{}
	}
	var consumer types.UID
	if h != nil {
		consumer = h.Consumer
	}
	p.consumerChangedLocked(key, prev.Consumer, consumer)
}

// victimSearch is a search for victims that found none.
type victimSearch struct {
	version  uint64
	priority int32
	request  schedtypes.Resources
	at       time.Time
	// retryAt is when a protection period that kept candidates out ends.
	retryAt          time.Time
	preempt, reclaim bool
	// reachable and partial are the search's Victims.Reachable and Partial.
	reachable, partial bool
}

// noVictimsTTL bounds how long a fruitless search is trusted: time alone can
// make units eligible (the reclaim protection period ends).
const noVictimsTTL = time.Second

// Preempt selects victims for a unit that did not fit (see quota.VictimSelector).
// A search that found nobody is not repeated for a unit of no higher priority
// and no smaller request in the same quota until what units hold in the
// cohort changes: it could only find a subset of the same candidates.
func (p *Plugin) Preempt(_ context.Context, u *framework.UnitInfo, preempt, reclaim bool, skip func(schedtypes.UnitKey) bool) schedtypes.Victims {
	p.mu.Lock()
	defer p.mu.Unlock()
	if tenancyLocked(p, u) != nil {
		return schedtypes.Victims{}
	}
	cohort := p.tree.Cohort(u.Quota)
	now := p.now()
	if last, ok := p.noVictims[u.Quota]; ok && last.version == p.versions[cohort] && now.Sub(last.at) < noVictimsTTL &&
		(last.retryAt.IsZero() || now.Before(last.retryAt)) && last.preempt == preempt && last.reclaim == reclaim &&
		u.Priority <= last.priority && covers(u.Request, last.request) {
		// Reachable is known only for the same request and priority.
		return schedtypes.Victims{RetryAt: last.retryAt, Reachable: last.reachable && u.Priority == last.priority && u.Request.Equal(last.request), Partial: last.partial}
	}
	held := p.cohortHoldingsLocked(cohort)
	leave, partial := p.leaveLocked(u.Key, skip)
	v := p.victims.Select(quota.Preemption{
		Quota: u.Quota, Request: u.Request, Priority: u.Priority,
		Preempt: preempt, Reclaim: reclaim, Protection: p.protection, Now: now, Leave: leave,
		Evicting: p.cohortEvictingLocked(cohort), EvictingKnown: true,
	}, held)
	v.Partial = *partial
	if len(v.Units) == 0 && !v.Waiting {
		v.Reachable = p.heldRoom.CouldFitFreed(u.Quota, u.Request, func(under schedtypes.QuotaName) schedtypes.Resources {
			return p.lowerUnderLocked(cohort, under, u.Priority, u.Key)
		})
		p.noVictims[u.Quota] = victimSearch{version: p.versions[cohort], priority: u.Priority, request: u.Request.Clone(), at: now,
			retryAt: v.RetryAt, preempt: preempt, reclaim: reclaim, reachable: v.Reachable, partial: v.Partial}
	}
	return v
}

// RefusalMark implements framework.RefusalChecker.
func (p *Plugin) RefusalMark(u *framework.UnitInfo, preempt, reclaim bool) *schedtypes.Recheck {
	p.mu.Lock()
	defer p.mu.Unlock()
	return &schedtypes.Recheck{Quota: u.Quota, Priority: u.Priority, Preempt: preempt, Shape: p.tree.ShapeVersion(), Changes: p.changes[u.Quota],
		Lack: p.lackLocked(u, p.tree.Check(u.Quota, u.Request), preempt, reclaim)}
}

// lackLocked is what u, refused with shortage s, lacks, when only room given
// back can answer it; nil when something else could:
//   - when it may reclaim, now or once its own quota uses less, for that
//     waits on charges elsewhere in the cohort, which no amount counts (a
//     unit that would borrow of each resource it asks for cannot reclaim
//     until its quota gives something back, which HoldingsChanged tells);
//   - when it may preempt and the units of lower priority in its quota hold
//     what it misses (a victim search could succeed).
//
// A unit that may preempt lacks what those units cannot give back.
func (p *Plugin) lackLocked(u *framework.UnitInfo, s *quota.Shortage, preempt, reclaim bool) *schedtypes.Lack {
	if s == nil || s.Reason().Kind != schedtypes.WaitInsufficientQuota {
		return nil
	}
	if reclaim {
		for r, v := range u.Request {
			if v > 0 && !p.tree.WouldBorrow(u.Quota, schedtypes.Resources{r: v}) {
				return nil
			}
		}
	}
	missing := s.Missing()
	if preempt {
		missing -= p.lowerHeldLocked(u, s.Resource)
	}
	if missing <= 0 {
		return nil
	}
	root := s.Quota == schedtypes.QuotaName(p.tree.Cohort(u.Quota)) && !p.tree.KeepsMins()
	return &schedtypes.Lack{Resource: s.Resource, Amount: missing, Root: root}
}

// lowerHeldLocked is what the units of u's quota at a lower priority than
// u hold of resource r, evicting or not: the most a victim search in its
// quota could give back.
func (p *Plugin) lowerHeldLocked(u *framework.UnitInfo, r corev1.ResourceName) int64 {
	var sum int64
	for key := range p.byQuota[u.Quota] {
		if h := p.charged[key]; key != u.Key && h.Priority < u.Priority {
			sum += h.Used[r]
		}
	}
	return sum
}

// StillRefused implements framework.RefusalChecker: the request still does
// not fit, for the same reason (the same quota and resource), and neither
// the tree's shape nor what units of u's quota hold changed since mark, so
// a victim search in its quota would find what it found then (nobody),
// unless the room it misses shrank to what its victims hold; and u may not
// reclaim. It returns mark with the Lack of now.
func (p *Plugin) StillRefused(u *framework.UnitInfo, mark *schedtypes.Recheck, reason schedtypes.Reason, reclaim bool) *schedtypes.Recheck {
	p.mu.Lock()
	defer p.mu.Unlock()
	if mark.Quota != u.Quota || mark.Priority != u.Priority || mark.Shape != p.tree.ShapeVersion() || mark.Changes != p.changes[u.Quota] {
		return nil
	}
	if tenancyLocked(p, u) != nil {
		return nil
	}
	s := p.tree.Check(u.Quota, u.Request)
	if s == nil || s.NeverFits || s.Reason() != reason {
		return nil
	}
	if reclaim && p.victims.CouldReclaim(u.Quota, u.Request) {
		return nil
	}
	if mark.Preempt && s.Missing() <= p.lowerHeldLocked(u, s.Resource) {
		return nil
	}
	out := *mark
	out.Lack = p.lackLocked(u, s, mark.Preempt, reclaim)
	return &out
}

// covers reports whether a asks at least as much as b of every resource b asks.
func covers(a, b schedtypes.Resources) bool {
	for r, v := range b {
		if a[r] < v {
			return false
		}
	}
	return true
}

// WouldBorrow reports whether u would take its quota above its min.
func (p *Plugin) WouldBorrow(u *framework.UnitInfo) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tree.WouldBorrow(u.Quota, u.Request)
}

// Share is how far quota name is into its fair share of what it may borrow
// (see quota.Tree.Share): the pass serves the lowest first.
func (p *Plugin) Share(quotaName schedtypes.QuotaName) float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tree.Share(quotaName)
}

// Sharing reports whether fair sharing is asked for: some quota has a
// shared-weight annotation.
func (p *Plugin) Sharing() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tree.Weighted()
}

// BelowMin reports whether a quota uses less than its min of some resource.
func (p *Plugin) BelowMin(quotaName schedtypes.QuotaName) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tree.BelowMin(quotaName)
}

// ListQuotas lists every quota with its usage.
func (p *Plugin) ListQuotas() []schedtypes.Info {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tree.List()
}
