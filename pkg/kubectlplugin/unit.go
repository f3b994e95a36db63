package kubectlplugin

import (
	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
)

// The rules of docs/protocol.md the plugin reads units by.

// IsPending reports whether a unit waits for admission.
func IsPending(u *schedv1alpha1.QueueUnit) bool {
	return u.Status.Phase == schedv1alpha1.QueueUnitPhaseNone || u.Status.Phase == schedv1alpha1.QueueUnitPhaseEnqueued
}

// HoldsQuota reports whether a unit is charged to its quota.
func HoldsQuota(u *schedv1alpha1.QueueUnit) bool {
	switch u.Status.Phase {
	case schedv1alpha1.QueueUnitPhaseReserved, schedv1alpha1.QueueUnitPhaseDequeued, schedv1alpha1.QueueUnitPhaseRunning:
		return true
	}
	return false
}

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

// Usage is what a unit holds: while its phase holds quota, the sum over its
// admissions of replicas x resources less the pods that finished; its whole
// request when it records no admission.
func Usage(u *schedv1alpha1.QueueUnit) quota.Resources {
	if !HoldsQuota(u) {
		return nil
	}
	if len(u.Status.Admissions) == 0 {
		return Request(u)
	}
	done := map[string]int32{}
	for _, rp := range u.Status.ReclaimablePods {
		done[rp.Name] = rp.Count
	}
	var total quota.Resources
	for _, a := range u.Status.Admissions {
		if n := int64(a.Replicas - done[a.Name]); n > 0 {
			total = total.Add(quota.FromList(a.Resources).Scale(n))
		}
	}
	return total
}

// Request is a unit's whole demand: spec.resource, else its pod sets.
func Request(u *schedv1alpha1.QueueUnit) quota.Resources {
	if len(u.Spec.Resource) > 0 {
		return quota.FromList(u.Spec.Resource)
	}
	var total quota.Resources
	for i := range u.Spec.PodSet {
		ps := &u.Spec.PodSet[i]
		total = total.Add(quota.FromList(resources.PodRequests(&ps.Template.Spec)).Scale(int64(ps.Count)))
	}
	return total
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
