package scheduler

import (
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/metrics"
	"github.com/koordinator-sh/koord-queue/pkg/queue"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
)

// Reasons the scheduler reports on units that wait for something other than quota.
const (
	reasonQueueNotFound = "queuenotfound"
	reasonNoQuota       = "noquota"
	// reasonStale marks a pending entry whose unit was admitted or changed
	// meanwhile; it is dropped, never reported.
	reasonStale = "stale"
)

func keyOf(u *v1alpha1.QueueUnit) string { return u.Namespace + "/" + u.Name }

func (s *Scheduler) onUnit(obj any) {
	u, ok := obj.(*v1alpha1.QueueUnit)
	if !ok {
		return
	}
	key := keyOf(u)
	queueName, quotaName := s.fw.Map(u)

	s.mu.Lock()
	st := s.units[key]
	if st == nil {
		st = &unitState{}
		s.units[key] = st
	}
	prev := st.obj
	if charged := chargedQuota(u, st); charged != "" && charged != quotaName {
		// Admitted units keep their quota whatever their labels say now.
		if st.relabelled != quotaName && s.leading.Load() {
			s.recorder.Eventf(u, corev1.EventTypeWarning, "QuotaChangeIgnored",
				"the unit stays charged to quota %s while it holds quota; quota %s applies when it is queued again", charged, quotaName)
		}
		st.relabelled = quotaName
		quotaName = charged
	}
	st.obj, st.queue, st.quota = u, queueName, quotaName
	if st.inflight {
		// The admission write in flight decides what happens next.
		s.mu.Unlock()
		return
	}
	wasHolding := st.holding
	st.holding = queueunit.HoldsQuota(u.Status.Phase)
	if !st.holding {
		st.evicting = false
	}
	// Usage follows the object (docs/protocol.md).
	s.fw.SetUsage(key, st.holdingFor(key, s.ceilings[st.queue]))
	if prev == nil && u.Status.Phase == v1alpha1.QueueUnitPhaseNone {
		s.opts.Metrics.Coming(u.Namespace, jobType(u), metrics.StatusCreated)
	}
	if prev != nil && queueunit.IsFinished(u.Status.Phase) && !queueunit.IsFinished(prev.Status.Phase) {
		s.opts.Metrics.Coming(u.Namespace, jobType(u), metrics.StatusFinished)
	}
	if !queueunit.IsPending(u.Status.Phase) || u.DeletionTimestamp != nil {
		s.unnominate(key)
	}
	s.mu.Unlock()

	if s.needsLifecycle(u) {
		s.lifecycle.Add(key)
	}
	phase := u.Status.Phase
	switch {
	case u.DeletionTimestamp != nil:
		s.queues.Delete(key)
		s.queues.PodsRunning(key)
	case queueunit.IsPending(phase):
		if wasHolding && s.leading.Load() {
			s.recorder.Eventf(u, corev1.EventTypeNormal, "Reclaimed", "Resources released; the unit is back in queue %s", queueName)
		}
		if wasHolding {
			s.queues.PodsRunning(key)
		}
		changed := prev == nil || prev.Generation != u.Generation || !maps.Equal(prev.Labels, u.Labels)
		s.enqueue(u, st, queueName, quotaName, changed)
	default:
		s.queues.Delete(key)
		if phase == v1alpha1.QueueUnitPhaseReserved || phase == v1alpha1.QueueUnitPhaseDequeued {
			// Rebuilt from the API, so wait-for-pods-running survives a restart.
			s.queues.AdmittedNotRunning(queueName, key)
		} else {
			s.queues.PodsRunning(key)
		}
	}
}

// enqueue puts a pending unit in its queue and reports where it cannot be.
func (s *Scheduler) enqueue(u *v1alpha1.QueueUnit, st *unitState, queueName, quotaName string, changed bool) {
	qu := &queue.Unit{
		Key: keyOf(u), Namespace: u.Namespace, Name: u.Name, Created: u.CreationTimestamp.Time,
		Quota: quotaName, Cohort: s.fw.Cohort(quotaName), Request: queueunit.Request(u), Enqueued: s.clock.Now(),
		WaitingSince: waitingSince(u),
	}
	s.mu.Lock()
	qu.Priority = priorityOf(u, s.ceilings[queueName])
	s.mu.Unlock()
	// The queue entry carries the unit's state, so a pass needs no lookup.
	qu.Object = st
	switch {
	case s.opts.Gates.QueueUnitActive && !ptr.Deref(u.Spec.Active, true):
		s.queues.Delete(qu.Key)
		s.reportWaiting(u, &queue.Failure{Reason: "inactive",
			Message: "inactive: spec.active is false; the unit is not admitted until it is set back to true"})
		return
	case s.refuseInvalid(u, qu.Key):
		return
	case s.budgetUsedUp(u):
		s.queues.Delete(qu.Key)
		s.reportWaiting(u, &queue.Failure{Reason: "budget",
			Message: "execution budget used up: raise spec.maximumExecutionTimeSeconds to run it again"})
		return
	}
	if queueName == "" {
		s.queues.Delete(qu.Key)
		s.reportWaiting(u, &queue.Failure{Reason: reasonNoQuota,
			Message: "no quota: the unit names no ElasticQuota (label " + v1alpha1.QuotaNameLabel + ") and no queue, so it cannot be admitted; add the label " +
				v1alpha1.QuotaNameLabel + " to the job, or start koord-queue-controllers with --default-quota=<quota>"})
		return
	}
	if !s.queues.Upsert(qu, queueName, changed) {
		s.reportWaiting(u, &queue.Failure{Reason: reasonQueueNotFound,
			Message: "queue " + queueName + " not found: the unit is admitted as soon as it exists"})
		return
	}
	if u.Status.Phase == v1alpha1.QueueUnitPhaseNone {
		s.markEnqueued(u)
	}
}

// chargedQuota is the quota an admitted unit is charged to: the one its
// admission recorded, else (an admission written before that field, or not
// seen back yet) the one the scheduler charged; "" for a unit that holds
// nothing.
func chargedQuota(u *v1alpha1.QueueUnit, st *unitState) string {
	switch {
	case st.inflight:
		// The admission being written decided the quota.
		return st.quota
	case !queueunit.HoldsQuota(u.Status.Phase):
		return ""
	case u.Status.Quota != "":
		return u.Status.Quota
	case st.holding:
		return st.quota
	}
	return ""
}

// waitingSince is when a unit's current wait began, from the API: its
// creation, or the moment it last gave its quota back (QuotaReserved turned
// False), whichever is later.
func waitingSince(u *v1alpha1.QueueUnit) time.Time {
	t := u.CreationTimestamp.Time
	if c := meta.FindStatusCondition(u.Status.Conditions, v1alpha1.ConditionQuotaReserved); c != nil &&
		c.Status == metav1.ConditionFalse && c.LastTransitionTime.After(t) {
		t = c.LastTransitionTime.Time
	}
	return t
}

func (s *Scheduler) onUnitDelete(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	u, ok := obj.(*v1alpha1.QueueUnit)
	if !ok {
		return
	}
	key := keyOf(u)
	s.mu.Lock()
	st := s.units[key]
	if st != nil {
		st.deleted = true
	}
	delete(s.units, key)
	s.unnominate(key)
	if st != nil && !st.inflight {
		s.fw.SetUsage(key, nil)
	}
	// An admission in flight fails with NotFound and gives its quota back.
	s.mu.Unlock()
	s.queues.Delete(key)
	s.queues.PodsRunning(key)
}

// resyncAll replays every known unit, for the writes and events a follower
// held back.
func (s *Scheduler) resyncAll() {
	s.mu.Lock()
	states := make([]*unitState, 0, len(s.units))
	objs := make([]*v1alpha1.QueueUnit, 0, len(s.units))
	for _, st := range s.units {
		states = append(states, st)
		objs = append(objs, st.obj)
	}
	s.mu.Unlock()
	for i, u := range objs {
		if queueunit.IsPending(u.Status.Phase) && u.DeletionTimestamp == nil {
			queueName, quotaName := s.fw.Map(u)
			s.enqueue(u, states[i], queueName, quotaName, false)
		}
	}
}

// markEnqueued gives a new unit its first phase. The write waits a moment: a
// unit admitted at once is written once, as Dequeued.
func (s *Scheduler) markEnqueued(u *v1alpha1.QueueUnit) {
	if !s.leading.Load() {
		return
	}
	key := keyOf(u)
	if s.writer.has(key) {
		return
	}
	s.writer.enqueue(key, &write{
		base: u, retryOnConflict: true, info: true,
		mutate: func(x *v1alpha1.QueueUnit) bool {
			if x.Status.Phase != v1alpha1.QueueUnitPhaseNone {
				return false
			}
			x.Status.Phase = v1alpha1.QueueUnitPhaseEnqueued
			now := s.now()
			x.Status.LastUpdateTime = &now
			return true
		},
	}, enqueueWriteDelay)
}

// reportWaiting writes why a unit waits (status.message and a
// QuotaReserved=False condition) and records a FailedScheduling (or
// QueueNotFound) event for a refusal, only when the reason changed. A reason
// that comes back before the report of the one in between was written costs
// nothing: that report is dropped.
func (s *Scheduler) reportWaiting(u *v1alpha1.QueueUnit, f *queue.Failure) {
	if f.Reason == reasonStale || !s.leading.Load() {
		return
	}
	key := keyOf(u)
	s.mu.Lock()
	st := s.units[key]
	if st == nil || st.inflight || st.reason == f.Reason {
		s.mu.Unlock()
		return
	}
	st.reason, st.wanted = f.Reason, f
	base := st.obj
	shown := st.shown == f.Reason && base.Status.Message == st.shownMessage
	told := st.shown != "" && base.Status.Message == st.shownMessage
	s.mu.Unlock()
	if shown {
		s.writer.dropInfo(key)
		return
	}
	delay := waitingWriteDelay
	if f.HeldBack && told {
		delay = heldBackRewriteDelay
	}
	s.writeWaiting(key, base, f, delay)
}

// writeWaiting queues the report of f after delay: a unit admitted
// meanwhile, or told something else, costs no write.
func (s *Scheduler) writeWaiting(key string, base *v1alpha1.QueueUnit, f *queue.Failure, delay time.Duration) {
	message, reason := f.Message, conditionReason(f.Reason)
	var event string
	switch {
	case f.Reason == reasonQueueNotFound:
		event = "QueueNotFound"
	case !f.HeldBack:
		// Held-back units were not tried: no attempt, no event.
		event = "FailedScheduling"
	}
	s.writer.enqueue(key, &write{
		base: base, retryOnConflict: true, info: true,
		written: func(x *v1alpha1.QueueUnit) {
			if event != "" {
				s.recorder.Event(x, corev1.EventTypeWarning, event, message)
			}
			s.shown(key, f)
		},
		mutate: func(x *v1alpha1.QueueUnit) bool {
			if !queueunit.IsPending(x.Status.Phase) || !setWaiting(x, reason, message, s.now()) {
				return false
			}
			if !f.HeldBack {
				x.Status.Attempts++
			}
			return true
		},
	}, delay)
}

// shown records that the API carries f's report; if the unit waits for
// something else by now (its report came while this one was being
// written), that is reported in turn.
func (s *Scheduler) shown(key string, f *queue.Failure) {
	s.mu.Lock()
	st := s.units[key]
	if st == nil {
		s.mu.Unlock()
		return
	}
	st.shown, st.shownMessage = f.Reason, f.Message
	wanted, base := st.wanted, st.obj
	s.mu.Unlock()
	if wanted != nil && wanted.Reason != f.Reason && !s.writer.has(key) {
		s.writeWaiting(key, base, wanted, waitingWriteDelay)
	}
}

// setWaiting puts a waiting unit's reason in its status: phase Enqueued,
// the message, and condition QuotaReserved=False with reason. A condition
// added now dates from the unit's creation: it never held quota, and the
// time its wait began (waitingSince) stays the same. It returns false when
// the status says all that already.
func setWaiting(x *v1alpha1.QueueUnit, reason, message string, now metav1.Time) bool {
	c := meta.FindStatusCondition(x.Status.Conditions, v1alpha1.ConditionQuotaReserved)
	if x.Status.Phase == v1alpha1.QueueUnitPhaseEnqueued && x.Status.Message == message &&
		c != nil && c.Status == metav1.ConditionFalse && c.Reason == reason && c.Message == message {
		return false
	}
	since := now
	if c == nil {
		since = x.CreationTimestamp
	}
	x.Status.Phase = v1alpha1.QueueUnitPhaseEnqueued
	x.Status.Message = message
	x.Status.LastUpdateTime = &now
	setCondition(x, v1alpha1.ConditionQuotaReserved, metav1.ConditionFalse, reason, message, since)
	return true
}
