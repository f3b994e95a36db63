package framework

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// waiting phases let the extension rewrite the unit's spec.
func waiting(p schedv1alpha1.QueueUnitPhase) bool {
	switch p {
	case schedv1alpha1.QueueUnitPhaseNone, schedv1alpha1.QueueUnitPhaseEnqueued, schedv1alpha1.QueueUnitPhaseTimeoutBackoff:
		return true
	}
	return false
}

// isEvicted reports an Evicted=True condition that is newer than the unit's
// last admission (the scheduler turns it False at admission; this guards a
// late write).
func isEvicted(unit *schedv1alpha1.QueueUnit) bool {
	c := meta.FindStatusCondition(unit.Status.Conditions, schedv1alpha1.ConditionEvicted)
	if c == nil || c.Status != metav1.ConditionTrue {
		return false
	}
	at := unit.Status.LastAllocateTime
	return at == nil || !c.LastTransitionTime.Before(at)
}

// ownBackoff reports a TimeoutBackoff this extension started (running
// timeout), as opposed to one the scheduler's admission checks started.
func ownBackoff(unit *schedv1alpha1.QueueUnit) bool {
	ev := meta.FindStatusCondition(unit.Status.Conditions, schedv1alpha1.ConditionEvicted)
	qr := meta.FindStatusCondition(unit.Status.Conditions, schedv1alpha1.ConditionQuotaReserved)
	return ev != nil && ev.Status == metav1.ConditionTrue && ev.Reason == schedv1alpha1.ReasonBackoffTimeout &&
		qr != nil && qr.Reason == reasonRunningTimeout
}

// dequeuedAt is when the unit became Dequeued, as well as the unit tells: the
// scheduler turns Admitted True when it writes Dequeued, while
// lastAllocateTime marks the reservation, which admission checks may have
// held for long before.
func dequeuedAt(unit *schedv1alpha1.QueueUnit) time.Time {
	if c := meta.FindStatusCondition(unit.Status.Conditions, schedv1alpha1.ConditionAdmitted); c != nil && c.Status == metav1.ConditionTrue {
		return c.LastTransitionTime.Time
	}
	if unit.Status.LastAllocateTime != nil {
		return unit.Status.LastAllocateTime.Time
	}
	if c := meta.FindStatusCondition(unit.Status.Conditions, schedv1alpha1.ConditionQuotaReserved); c != nil && c.Status == metav1.ConditionTrue {
		return c.LastTransitionTime.Time
	}
	return unit.CreationTimestamp.Time
}

func setCondition(unit *schedv1alpha1.QueueUnit, condType string, status metav1.ConditionStatus, reason, msg string, now metav1.Time) {
	meta.SetStatusCondition(&unit.Status.Conditions, metav1.Condition{
		Type:               condType,
		Status:             status,
		Reason:             reason,
		Message:            msg,
		LastTransitionTime: now,
		ObservedGeneration: unit.Generation,
	})
}

// clearAdmission drops what the unit was admitted with: it charges no quota
// any more.
func clearAdmission(unit *schedv1alpha1.QueueUnit, reason, msg string, now metav1.Time) {
	unit.Status.Admissions = nil
	unit.Status.PodState = nil
	unit.Status.ReclaimablePods = nil
	setCondition(unit, schedv1alpha1.ConditionQuotaReserved, metav1.ConditionFalse, reason, msg, now)
	setCondition(unit, schedv1alpha1.ConditionAdmitted, metav1.ConditionFalse, reason, msg, now)
	if meta.FindStatusCondition(unit.Status.Conditions, schedv1alpha1.ConditionPodsReady) != nil {
		setCondition(unit, schedv1alpha1.ConditionPodsReady, metav1.ConditionFalse, reason, msg, now)
	}
}

// requeue hands an evicted or timed-out unit back to the queue.
func requeue(unit *schedv1alpha1.QueueUnit, msg string, now metav1.Time) {
	unit.Status.Phase = schedv1alpha1.QueueUnitPhaseEnqueued
	clearAdmission(unit, reasonRequeued, msg, now)
}

// reportPods writes the job's pod counts into the unit: podState,
// admissions[].running, reclaimablePods, and Running once a pod runs.
func reportPods(unit *schedv1alpha1.QueueUnit, status JobStatus, now metav1.Time) {
	running, pending := status.Running(), status.Pending()
	if running != 0 || pending != 0 || unit.Status.PodState != nil {
		unit.Status.PodState = &schedv1alpha1.PodState{Running: running, Pending: pending}
	}
	byName := map[string]PodSetStatus{}
	for _, ps := range status.PodSets {
		byName[ps.Name] = ps
	}
	for i := range unit.Status.Admissions {
		unit.Status.Admissions[i].Running = byName[unit.Status.Admissions[i].Name].Running
	}
	var reclaimable []schedv1alpha1.ReclaimablePod
	for _, ps := range unit.Spec.PodSet {
		if n := byName[ps.Name].Finished; n > 0 {
			reclaimable = append(reclaimable, schedv1alpha1.ReclaimablePod{Name: ps.Name, Count: min(n, ps.Count)})
		}
	}
	unit.Status.ReclaimablePods = reclaimable
	if running > 0 && unit.Status.Phase == schedv1alpha1.QueueUnitPhaseDequeued {
		unit.Status.Phase = schedv1alpha1.QueueUnitPhaseRunning
	}
	if running > 0 && pending == 0 && unit.Status.Phase == schedv1alpha1.QueueUnitPhaseRunning {
		setCondition(unit, schedv1alpha1.ConditionPodsReady, metav1.ConditionTrue, reasonPodsRunning, "all started pods run", now)
	}
}
