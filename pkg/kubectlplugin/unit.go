package kubectlplugin

import (
	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
)

// The rules of docs/protocol.md the plugin reads units by.

// IsPending reports whether a unit waits for admission.
func IsPending(u *schedv1alpha1.QueueUnit) bool { return queueunit.IsPending(u.Status.Phase) }

// HoldsQuota reports whether a unit is charged to its quota.
func HoldsQuota(u *schedv1alpha1.QueueUnit) bool { return queueunit.HoldsQuota(u.Status.Phase) }

// WaitingQuota is the quota a waiting unit asks: its quota label, else
// spec.queue.
func WaitingQuota(u *schedv1alpha1.QueueUnit) string {
	if q := u.Labels[schedv1alpha1.QuotaNameLabel]; q != "" {
		return q
	}
	return u.Spec.Queue
}

// QuotaOf is the unit's quota: status.quota while it holds quota, else the
// quota it asks.
func QuotaOf(u *schedv1alpha1.QueueUnit) string {
	if HoldsQuota(u) && u.Status.Quota != "" {
		return u.Status.Quota
	}
	return WaitingQuota(u)
}

// QueueOf is the queue of a unit: the Queue named like its quota label, else
// spec.queue.
func QueueOf(u *schedv1alpha1.QueueUnit) string { return WaitingQuota(u) }

func chargedQuota(u *schedv1alpha1.QueueUnit) string {
	if !HoldsQuota(u) {
		return ""
	}
	return QuotaOf(u)
}

func priorityOf(u *schedv1alpha1.QueueUnit) int32 {
	if u.Spec.Priority != nil {
		return *u.Spec.Priority
	}
	return 0
}

// isActive reads spec.active (unset means true).
func isActive(u *schedv1alpha1.QueueUnit) bool {
	return u.Spec.Active == nil || *u.Spec.Active
}
