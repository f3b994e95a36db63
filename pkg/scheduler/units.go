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
	"maps"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/metrics"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

func keyOf(u *schedv1alpha1.QueueUnit) schedtypes.UnitKey {
	return schedtypes.NewUnitKey(u.Namespace, u.Name)
}

// intake follows the QueueUnit informer: it records each change in the
// cache, puts pending units in their queues (or says why they cannot be
// there), and hands units with deadlines to the lifecycle controller.
type intake struct {
	*env
	cache     *unitCache
	registry  *queueRegistry
	preemptor *preemptor
	lifecycle *lifecycle
	reports   *reporter
}

func (in *intake) onUnit(obj any) {
	u, ok := obj.(*schedv1alpha1.QueueUnit)
	if !ok {
		return
	}
	key := keyOf(u)
	mappedQueue, mappedQuota := in.fw.Map(u)
	o := in.cache.observe(key, u, mappedQueue, mappedQuota)
	if o.stale {
		klog.Background().WithName("scheduler").V(2).Info("Ignoring an older version of a unit", "unit", key, "resourceVersion", u.ResourceVersion)
		return
	}
	queueName := o.queue
	if o.relabelled != "" && in.leader() {
		in.recorder.Eventf(u, corev1.EventTypeWarning, "QuotaChangeIgnored",
			"the unit stays charged to quota %s while it holds quota; quota %s applies when it is queued again", o.quota, o.relabelled)
	}
	if o.inflight {
		// The admission write in flight decides what happens next.
		return
	}
	if o.prev == nil && u.Status.Phase == schedv1alpha1.QueueUnitPhaseNone {
		in.opts.Metrics.Coming(u.Namespace, jobType(u), metrics.StatusCreated)
	}
	if o.prev != nil && queueunit.IsFinished(u.Status.Phase) && !queueunit.IsFinished(o.prev.Status.Phase) {
		in.opts.Metrics.Coming(u.Namespace, jobType(u), metrics.StatusFinished)
	}
	if !queueunit.IsPending(u.Status.Phase) || u.DeletionTimestamp != nil {
		in.preemptor.unnominate(key)
	}
	if in.lifecycle.needs(u) {
		in.lifecycle.add(key)
	}
	phase := u.Status.Phase
	switch {
	case u.DeletionTimestamp != nil:
		in.queues.Delete(key)
		in.queues.PodsRunning(key)
	case queueunit.IsPending(phase):
		if o.wasHolding && in.leader() {
			in.recorder.Eventf(u, corev1.EventTypeNormal, "Reclaimed", "Resources released; the unit is back in queue %s", queueName)
		}
		if o.wasHolding {
			in.queues.PodsRunning(key)
		}
		changed := o.prev == nil || o.prev.Generation != u.Generation || !maps.Equal(o.prev.Labels, u.Labels)
		in.enqueue(u, o.st, queueName, o.quota, changed)
	default:
		in.queues.Delete(key)
		if phase == schedv1alpha1.QueueUnitPhaseReserved || phase == schedv1alpha1.QueueUnitPhaseDequeued {
			// Rebuilt from the API, so wait-for-pods-running survives a restart.
			in.queues.AdmittedNotRunning(queueName, key)
		} else {
			in.queues.PodsRunning(key)
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
	case in.lifecycle.budgetUsedUp(u):
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

func (in *intake) onUnitDelete(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	u, ok := obj.(*schedv1alpha1.QueueUnit)
	if !ok {
		return
	}
	key := keyOf(u)
	in.cache.remove(key)
	in.preemptor.unnominate(key)
	in.queues.Delete(key)
	in.queues.PodsRunning(key)
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

func jobType(u *schedv1alpha1.QueueUnit) string {
	if u.Spec.ConsumerRef == nil {
		return ""
	}
	return u.Spec.ConsumerRef.Kind
}
