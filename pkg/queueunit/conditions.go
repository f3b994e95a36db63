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
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// Condition reasons of docs/protocol.md. The scheduler writes the first
// three at admission; the extension writes the others. The reasons of a wait
// (InsufficientQuota, ...) and of an eviction (schedv1alpha1.ReasonPreempted,
// ...) come with the message that explains them.
const (
	ReasonQuotaReserved          = "QuotaReserved"
	ReasonAdmitted               = "Admitted"
	ReasonAdmissionChecksPending = "AdmissionChecksPending"

	ReasonPodsRunning    = "PodsRunning"
	ReasonJobSucceeded   = "JobSucceeded"
	ReasonJobFailed      = "JobFailed"
	ReasonRequeued       = "Requeued"
	ReasonRunningTimeout = "RunningTimeout"
	ReasonJobGrew        = "JobGrew"
)

// SetCondition sets condition t of u. The transition time moves only when the
// status changes (meta.SetStatusCondition), and the condition records the
// generation it was decided on.
func SetCondition(u *schedv1alpha1.QueueUnit, t string, status metav1.ConditionStatus, reason, message string, now metav1.Time) {
	meta.SetStatusCondition(&u.Status.Conditions, metav1.Condition{
		Type: t, Status: status, Reason: reason, Message: message, LastTransitionTime: now, ObservedGeneration: u.Generation,
	})
}

// SetWaiting says why a waiting unit waits: phase Enqueued, status.message,
// and condition QuotaReserved=False with reason and the same message. A
// condition added now dates from the unit's creation (it never held quota),
// and one already False keeps its time, so WaitingSince stays put. It
// returns false, changing nothing, when the status says all that already.
func SetWaiting(u *schedv1alpha1.QueueUnit, reason, message string, now metav1.Time) bool {
	c := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionQuotaReserved)
	if u.Status.Phase == schedv1alpha1.QueueUnitPhaseEnqueued && u.Status.Message == message &&
		c != nil && c.Status == metav1.ConditionFalse && c.Reason == reason && c.Message == message {
		return false
	}
	since := now
	if c == nil {
		since = u.CreationTimestamp
	}
	u.Status.Phase = schedv1alpha1.QueueUnitPhaseEnqueued
	u.Status.Message = message
	u.Status.LastUpdateTime = &now
	SetCondition(u, schedv1alpha1.ConditionQuotaReserved, metav1.ConditionFalse, reason, message, since)
	return true
}

// WaitReason is the reason of the condition QuotaReserved=False that
// SetWaiting wrote with the unit's status.message, or "" when the status
// does not say why the unit waits (not tried yet, or the condition tells of
// something else, such as an eviction).
func WaitReason(u *schedv1alpha1.QueueUnit) string {
	c := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionQuotaReserved)
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued || u.Status.Message == "" ||
		c == nil || c.Status != metav1.ConditionFalse || c.Message != u.Status.Message {
		return ""
	}
	return c.Reason
}

// WaitingSince is when a unit's current wait began, from the API: its
// creation, or the moment it last gave its quota back (QuotaReserved turned
// False), whichever is later.
func WaitingSince(u *schedv1alpha1.QueueUnit) time.Time {
	t := u.CreationTimestamp.Time
	if c := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionQuotaReserved); c != nil &&
		c.Status == metav1.ConditionFalse && c.LastTransitionTime.After(t) {
		t = c.LastTransitionTime.Time
	}
	return t
}

// MarkEnqueued gives a unit seen for the first time its first phase,
// Enqueued; it returns false for a unit that has a phase already.
func MarkEnqueued(u *schedv1alpha1.QueueUnit, now metav1.Time) bool {
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseNone {
		return false
	}
	u.Status.Phase = schedv1alpha1.QueueUnitPhaseEnqueued
	u.Status.LastUpdateTime = &now
	return true
}
