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

package scheduler

import (
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

func keyOf(u *schedv1alpha1.QueueUnit) schedtypes.UnitKey {
	return schedtypes.NewUnitKey(u.Namespace, u.Name)
}

// intake follows the QueueUnit informer: each event is one update of the
// cache, whose change (unitChange) every part that follows units then acts
// on, in one place each (apply). Its own part is the queues: it puts pending
// units in them (or says why they cannot be there) and takes the others
// out.
type intake struct {
	*env
	cache    *unitCache
	registry *queueRegistry
	reports  *reporter
	// followers act on each change, in this order; the intake is last.
	followers []unitFollower
}

var _ unitFollower = (*intake)(nil)

// newIntake follows units for the followers, in their order, then for the
// queues.
func newIntake(e *env, cache *unitCache, registry *queueRegistry, reports *reporter, followers ...unitFollower) *intake {
	in := &intake{env: e, cache: cache, registry: registry, reports: reports}
	in.followers = append(followers, in)
	return in
}

func (in *intake) onUnit(obj any) {
	u, ok := obj.(*schedv1alpha1.QueueUnit)
	if !ok {
		return
	}
	mappedQueue, mappedQuota := in.fw.Map(u)
	in.apply(in.cache.observe(keyOf(u), u, mappedQueue, mappedQuota))
}

func (in *intake) onUnitDelete(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	u, ok := obj.(*schedv1alpha1.QueueUnit)
	if !ok {
		return
	}
	in.apply(in.cache.remove(keyOf(u)))
}

// apply hands a change of the cache to every follower; a stale version
// changes nothing.
func (in *intake) apply(ch unitChange) {
	if ch.kind == changeStale {
		klog.Background().WithName("scheduler").V(2).Info("Ignoring an older version of a unit", "unit", ch.key, "resourceVersion", ch.new.ResourceVersion)
		return
	}
	for _, f := range in.followers {
		f.unitChanged(ch)
	}
}

// unitChanged keeps the queues in step with a change: a pending unit is in
// its queue, any other is not.
func (in *intake) unitChanged(ch unitChange) {
	switch ch.kind {
	case changeDeleting, changeDeleted:
		in.queues.Delete(ch.key)
		in.queues.PodsRunning(ch.key)
	case changePending:
		if ch.wasHolding {
			in.queues.PodsRunning(ch.key)
		}
		in.enqueue(ch.new, ch.st, ch.queue, ch.quota, ch.specChanged())
	case changeAdmitted:
		in.queues.Delete(ch.key)
		if p := ch.new.Status.Phase; p == schedv1alpha1.QueueUnitPhaseReserved || p == schedv1alpha1.QueueUnitPhaseDequeued {
			// Rebuilt from the API, so wait-for-pods-running survives a restart.
			in.queues.AdmittedNotRunning(ch.queue, ch.key)
		} else {
			in.queues.PodsRunning(ch.key)
		}
	}
}

// enqueue puts a pending unit in its queue and reports where it cannot be.
func (in *intake) enqueue(u *schedv1alpha1.QueueUnit, st *unitState, queueName schedtypes.QueueName, quotaName schedtypes.QuotaName, changed bool) {
	qu := &schedtypes.Unit{
		Key: keyOf(u), Namespace: u.Namespace, Name: u.Name, Created: queueunit.Created(u),
		Quota: quotaName, Cohort: in.fw.Cohort(quotaName), Request: queueunit.Request(u), Enqueued: in.clock.Now(),
		WaitingSince: queueunit.WaitingSince(u), Priority: priorityOf(u, in.registry.ceiling(queueName)),
		// The queue entry carries the unit's state, so a pass needs no lookup.
		Object: st,
	}
	switch {
	case in.opts.Gates.QueueUnitActive && !queueunit.IsActive(u):
		in.queues.Delete(qu.Key)
		in.reports.reportWaiting(u, &schedtypes.Failure{Reason: schedtypes.Reason{Kind: schedtypes.WaitInactive},
			Message: "inactive: spec.active is false; the unit is not admitted until it is set back to true"})
		return
	case in.refuseInvalid(u, qu.Key):
		return
	case budgetUsedUp(in.opts.Gates, u, in.clock.Now()):
		in.queues.Delete(qu.Key)
		in.reports.reportWaiting(u, &schedtypes.Failure{Reason: schedtypes.Reason{Kind: schedtypes.WaitBudgetUsedUp},
			Message: "execution budget used up: raise spec.maximumExecutionTimeSeconds to run it again"})
		return
	}
	if queueName == "" {
		in.queues.Delete(qu.Key)
		in.reports.reportWaiting(u, &schedtypes.Failure{Reason: schedtypes.Reason{Kind: schedtypes.WaitNoQuota},
			Message: "no quota: the unit names no ElasticQuota (label " + schedv1alpha1.QuotaNameLabel + ") and no queue, so it cannot be admitted; add the label " +
				schedv1alpha1.QuotaNameLabel + " to the job, or start koord-queue-controllers with --default-quota=<quota>"})
		return
	}
	if !in.queues.Upsert(qu, queueName, changed) {
		in.reports.queueNotFound(u, queueName)
		return
	}
	if u.Status.Phase == schedv1alpha1.QueueUnitPhaseNone {
		in.reports.markEnqueued(u)
	}
}

// refuseInvalid keeps a unit whose demand cannot be counted out of its queue
// and says why; it reports whether it did.
func (in *intake) refuseInvalid(u *schedv1alpha1.QueueUnit, key schedtypes.UnitKey) bool {
	err := invalidRequest(u)
	if err == nil {
		return false
	}
	in.queues.Delete(key)
	in.reports.reportWaiting(u, &schedtypes.Failure{Reason: schedtypes.Reason{Kind: schedtypes.WaitInvalidRequest}, Message: "never fits: invalid request: " + err.Error(), NeverFits: true})
	return true
}

// replay puts a waiting unit back in its queue (the end of a backoff).
func (in *intake) replay(key schedtypes.UnitKey) {
	if st, u := in.cache.entry(key); u != nil {
		queueName, quotaName := in.fw.Map(u)
		in.enqueue(u, st, queueName, quotaName, true)
	}
}

// resyncAll replays every pending unit, for the writes and events a
// follower held back.
func (in *intake) resyncAll() {
	for _, p := range in.cache.pending("") {
		if p.obj.DeletionTimestamp == nil {
			queueName, quotaName := in.fw.Map(p.obj)
			in.enqueue(p.obj, p.st, queueName, quotaName, false)
		}
	}
}

// jobType is the kind of the unit's job ("" when it names none).
func jobType(u *schedv1alpha1.QueueUnit) string {
	if u.Spec.ConsumerRef == nil {
		return ""
	}
	return u.Spec.ConsumerRef.Kind
}
