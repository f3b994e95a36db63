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

package queueunit

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// The eviction steps of docs/protocol.md:
//
//  1. The scheduler wants a unit's quota back: MarkEvicted (Evicted=True with
//     the reason, every admission's reclaimState). The unit still holds its
//     quota: IsEvicting.
//  2. The extension sees IsEvicting, suspends the job and, once the job
//     has no active pod left, hands the unit back with Requeue: phase
//     Enqueued, admissions cleared, QuotaReserved and Admitted False.
//  3. An Enqueued unit holds nothing (HoldsQuota), so the scheduler releases
//     its charge when it reads that phase.
//
// A job that grew beyond its admission takes steps 2 and 3 with reason
// ReasonJobGrew; a job whose pods did not run within the extension's
// running timeout goes through MarkRunningTimeout instead, and is requeued
// once the backoff has passed.

// IsEvicting reports whether a unit was told to give its quota back and
// still holds it: step 1 done, step 2 not yet. Only an Evicted=True condition
// not older than the unit's last admission counts: the scheduler turns it
// False when it admits the unit, so one from before that admission asks
// nothing any more.
func IsEvicting(u *schedv1alpha1.QueueUnit) bool {
	if !HoldsQuota(u.Status.Phase) {
		return false
	}
	c := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionEvicted)
	if c == nil || c.Status != metav1.ConditionTrue {
		return false
	}
	at := u.Status.LastAllocateTime
	return at == nil || !c.LastTransitionTime.Before(at)
}

// MarkEvicted asks a unit for its quota back (step 1): condition Evicted=True
// with reason (schedv1alpha1.ReasonPreempted, ReasonDeactivated or
// ReasonMaximumExecutionTimeExceeded) and message, every admission's
// reclaimState set to its replicas. It returns false, changing nothing, for
// a unit that holds no quota or is being evicted already.
func MarkEvicted(u *schedv1alpha1.QueueUnit, reason, message string, now metav1.Time) bool {
	if !HoldsQuota(u.Status.Phase) || IsEvicting(u) {
		return false
	}
	if meta.IsStatusConditionTrue(u.Status.Conditions, schedv1alpha1.ConditionEvicted) {
		// Left from before the last admission: the new one dates from now.
		meta.RemoveStatusCondition(&u.Status.Conditions, schedv1alpha1.ConditionEvicted)
	}
	SetCondition(u, schedv1alpha1.ConditionEvicted, metav1.ConditionTrue, reason, message, now)
	for i := range u.Status.Admissions {
		u.Status.Admissions[i].ReclaimState = &schedv1alpha1.ReclaimState{Replicas: u.Status.Admissions[i].Replicas}
	}
	u.Status.LastUpdateTime = &now
	return true
}

// ClearAdmission drops what the unit was admitted with, so it charges no
// quota any more: admissions, podState and reclaimablePods go, QuotaReserved
// and Admitted turn False with reason and message, and so does PodsReady if
// the unit has it. A refusal of its pods for quota ends with the admission
// (EndRefusedByQuota), so the next admission tells its own. The phase is the
// caller's.
func ClearAdmission(u *schedv1alpha1.QueueUnit, reason, message string, now metav1.Time) {
	u.Status.Admissions = nil
	u.Status.PodState = nil
	u.Status.ReclaimablePods = nil
	SetCondition(u, schedv1alpha1.ConditionQuotaReserved, metav1.ConditionFalse, reason, message, now)
	SetCondition(u, schedv1alpha1.ConditionAdmitted, metav1.ConditionFalse, reason, message, now)
	if meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionPodsReady) != nil {
		SetCondition(u, schedv1alpha1.ConditionPodsReady, metav1.ConditionFalse, reason, message, now)
	}
	EndRefusedByQuota(u, now)
}

// Requeue hands a unit back to the queue (step 2): phase Enqueued, its
// admission cleared with reason (ReasonRequeued after an eviction or a
// backoff, ReasonJobGrew for a job that grew).
func Requeue(u *schedv1alpha1.QueueUnit, reason, message string, now metav1.Time) {
	u.Status.Phase = schedv1alpha1.QueueUnitPhaseEnqueued
	ClearAdmission(u, reason, message, now)
}

// MarkRunningTimeout sends a unit whose pods did not run in time to
// TimeoutBackoff, releasing its admission: Evicted=True (reason
// schedv1alpha1.ReasonBackoffTimeout) and QuotaReserved/Admitted False
// (reason ReasonRunningTimeout), both with message.
func MarkRunningTimeout(u *schedv1alpha1.QueueUnit, message string, now metav1.Time) {
	u.Status.Phase = schedv1alpha1.QueueUnitPhaseTimeoutBackoff
	SetCondition(u, schedv1alpha1.ConditionEvicted, metav1.ConditionTrue, schedv1alpha1.ReasonBackoffTimeout, message, now)
	ClearAdmission(u, ReasonRunningTimeout, message, now)
}

// InRunningTimeoutBackoff reports a TimeoutBackoff the extension started
// (MarkRunningTimeout), as opposed to one the scheduler's admission checks
// started; only the extension ends it.
func InRunningTimeoutBackoff(u *schedv1alpha1.QueueUnit) bool {
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseTimeoutBackoff {
		return false
	}
	ev := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionEvicted)
	qr := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionQuotaReserved)
	return ev != nil && ev.Status == metav1.ConditionTrue && ev.Reason == schedv1alpha1.ReasonBackoffTimeout &&
		qr != nil && qr.Reason == ReasonRunningTimeout
}

// BackoffStarted is when a unit in the extension's TimeoutBackoff was sent
// there (its Evicted condition's time); zero when it is not in one.
func BackoffStarted(u *schedv1alpha1.QueueUnit) metav1.Time {
	if !InRunningTimeoutBackoff(u) {
		return metav1.Time{}
	}
	return meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionEvicted).LastTransitionTime
}

// DequeuedAt is when the unit became Dequeued, as far as the unit tells: the
// scheduler turns Admitted True when it writes Dequeued, while
// lastAllocateTime marks the reservation, which admission checks may have
// held for long before. The extension's running timeout counts from it.
func DequeuedAt(u *schedv1alpha1.QueueUnit) metav1.Time {
	if c := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionAdmitted); c != nil && c.Status == metav1.ConditionTrue {
		return c.LastTransitionTime
	}
	if u.Status.LastAllocateTime != nil {
		return *u.Status.LastAllocateTime
	}
	if c := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionQuotaReserved); c != nil && c.Status == metav1.ConditionTrue {
		return c.LastTransitionTime
	}
	return u.CreationTimestamp
}
