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
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// Reasons on the QuotaReserved condition of a unit its admission checks sent
// to TimeoutBackoff: such a backoff is the scheduler's; a TimeoutBackoff
// with any other reason is the extension's (MarkRunningTimeout).
const (
	ReasonAdmissionCheckRetry    = "AdmissionCheckRetry"
	ReasonAdmissionCheckRejected = "AdmissionCheckRejected"
	ReasonAdmissionCheckTimeout  = "AdmissionCheckTimeout"
)

// InChecksBackoff reports a TimeoutBackoff the scheduler's admission checks
// started (MarkChecksBackoff); the scheduler ends it.
func InChecksBackoff(u *schedv1alpha1.QueueUnit) bool {
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseTimeoutBackoff {
		return false
	}
	c := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionQuotaReserved)
	if c == nil {
		return false
	}
	switch c.Reason {
	case ReasonAdmissionCheckRetry, ReasonAdmissionCheckRejected, ReasonAdmissionCheckTimeout:
		return true
	}
	return false
}

// MarkChecksReady admits a Reserved unit whose checks are all Ready: phase
// Dequeued, no message, Admitted=True. It returns false, changing nothing,
// for a unit that is not Reserved.
func MarkChecksReady(u *schedv1alpha1.QueueUnit, now metav1.Time) bool {
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseReserved {
		return false
	}
	u.Status.Phase = schedv1alpha1.QueueUnitPhaseDequeued
	u.Status.Message = ""
	u.Status.LastUpdateTime = &now
	SetCondition(u, schedv1alpha1.ConditionAdmitted, metav1.ConditionTrue, ReasonAdmitted, "Every admission check is Ready", now)
	return true
}

// MarkChecksBackoff releases the reservation of a Reserved unit whose checks
// answered Retry or Rejected, or not in time: phase TimeoutBackoff,
// admissions cleared, QuotaReserved and Admitted False with reason (one of
// the ReasonAdmissionCheck* constants) and message, and
// status.requeueState.requeueAt; count, when above 0, is the requeue count
// recorded with it. It returns false, changing nothing, for a unit that is
// not Reserved.
func MarkChecksBackoff(u *schedv1alpha1.QueueUnit, reason, message string, requeueAt time.Time, count int32, now metav1.Time) bool {
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseReserved {
		return false
	}
	u.Status.Phase = schedv1alpha1.QueueUnitPhaseTimeoutBackoff
	u.Status.Message = message
	u.Status.Admissions = nil
	u.Status.LastUpdateTime = &now
	rs := &schedv1alpha1.RequeueState{RequeueAt: &metav1.Time{Time: requeueAt}}
	if count > 0 {
		rs.Count = ptr.To(count)
	}
	u.Status.RequeueState = rs
	SetCondition(u, schedv1alpha1.ConditionQuotaReserved, metav1.ConditionFalse, reason, message, now)
	SetCondition(u, schedv1alpha1.ConditionAdmitted, metav1.ConditionFalse, reason, message, now)
	return true
}

// EndChecksBackoff puts a unit back in its queue once its checks' backoff
// has passed: phase Enqueued, its checks dropped. It returns false, changing
// nothing, for a unit not in such a backoff.
func EndChecksBackoff(u *schedv1alpha1.QueueUnit, now metav1.Time) bool {
	if !InChecksBackoff(u) {
		return false
	}
	u.Status.Phase = schedv1alpha1.QueueUnitPhaseEnqueued
	u.Status.AdmissionChecks = nil
	u.Status.Message = "back in queue after the admission check backoff"
	u.Status.LastUpdateTime = &now
	return true
}
