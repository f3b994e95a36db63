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
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// WaitingQuota is the quota a waiting unit asks for: its label
// quota.scheduling.koordinator.sh/name, else spec.queue. Its queue is the
// Queue named like it.
func WaitingQuota(u *schedv1alpha1.QueueUnit) string {
	if q := u.Labels[schedv1alpha1.QuotaNameLabel]; q != "" {
		return q
	}
	return u.Spec.Queue
}

// QueueOf is the unit's queue: the Queue named like the quota it asks for
// (in namespace koord-queue; the scheduler may map units otherwise through
// its plugins).
func QueueOf(u *schedv1alpha1.QueueUnit) string { return WaitingQuota(u) }

// ChargedQuota is the quota a unit that holds quota is charged to: the one
// its admission recorded in status.quota, else (an admission written before
// that field) the one it asks for; "" for a unit that holds nothing.
func ChargedQuota(u *schedv1alpha1.QueueUnit) string {
	switch {
	case !HoldsQuota(u.Status.Phase):
		return ""
	case u.Status.Quota != "":
		return u.Status.Quota
	}
	return WaitingQuota(u)
}

// QuotaOf is the unit's quota: the one it is charged to while it holds
// quota (a change of labels moves no charge), else the one it asks for.
func QuotaOf(u *schedv1alpha1.QueueUnit) string {
	if q := ChargedQuota(u); q != "" {
		return q
	}
	return WaitingQuota(u)
}

// Priority is spec.priority, 0 when unset. The scheduler bounds it by the
// queue's koord-queue/max-priority.
func Priority(u *schedv1alpha1.QueueUnit) int32 { return ptr.Deref(u.Spec.Priority, 0) }

// IsActive reads spec.active: unset means true. It is honoured only with the
// feature gate QueueUnitActive.
func IsActive(u *schedv1alpha1.QueueUnit) bool { return ptr.Deref(u.Spec.Active, true) }
