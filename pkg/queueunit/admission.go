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
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
)

// DefaultPodSet names the one admission of a unit admitted as a whole: it has
// no pod sets, or its spec.resource says more than its pod sets add up to.
const DefaultPodSet = "default"

// AdmissionsFor is what admitting u records per pod set, the charge
// status.admissions then carries: each pod set's count x its pods' effective
// requests; one DefaultPodSet replica of the whole request for a unit
// without pod sets, or whose spec.resource differs from what its sets add up
// to (a job whose pods are not all in its sets).
func AdmissionsFor(u *schedv1alpha1.QueueUnit) []schedv1alpha1.Admission {
	if len(u.Spec.PodSet) == 0 {
		return []schedv1alpha1.Admission{{Name: DefaultPodSet, Replicas: 1, Resources: Request(u).ToList()}}
	}
	out := make([]schedv1alpha1.Admission, 0, len(u.Spec.PodSet))
	for i := range u.Spec.PodSet {
		ps := &u.Spec.PodSet[i]
		out = append(out, schedv1alpha1.Admission{Name: ps.Name, Replicas: ps.Count, Resources: resources.PodRequests(&ps.Template.Spec)})
	}
	if total := Request(u); len(u.Spec.Resource) > 0 && !total.Equal(sumAdmissions(out)) {
		return []schedv1alpha1.Admission{{Name: DefaultPodSet, Replicas: 1, Resources: total.ToList()}}
	}
	return out
}

func sumAdmissions(as []schedv1alpha1.Admission) schedtypes.Resources {
	var total schedtypes.Resources
	for _, a := range as {
		total = total.Add(schedtypes.FromList(a.Resources).Scale(int64(a.Replicas)))
	}
	return total
}

// MarkAdmitted writes an admission into u's status: the admissions and the
// quota charged, lastAllocateTime, one more attempt, conditions QuotaReserved
// and Admitted True, and phase Dequeued. When its queue requires admission
// checks, the phase is Reserved instead, with every check Pending, Admitted
// False (reason AdmissionChecksPending) and a message naming the checks. An
// Evicted condition left from an earlier admission turns False, and the
// requeue count is kept (its time dropped) until the unit runs.
func MarkAdmitted(u *schedv1alpha1.QueueUnit, quotaName, queueName string, admissions []schedv1alpha1.Admission, checks []string, now metav1.Time) {
	u.Status.Phase = schedv1alpha1.QueueUnitPhaseDequeued
	u.Status.AdmissionChecks = nil
	u.Status.RequeueState = KeepRequeueCount(u.Status.RequeueState)
	u.Status.Admissions = admissions
	u.Status.LastAllocateTime = &now
	u.Status.LastUpdateTime = &now
	u.Status.Quota = quotaName
	u.Status.Message = ""
	u.Status.Attempts++
	u.Status.ReclaimablePods = nil
	SetCondition(u, schedv1alpha1.ConditionQuotaReserved, metav1.ConditionTrue, ReasonQuotaReserved, "Quota reserved in "+quotaName, now)
	SetCondition(u, schedv1alpha1.ConditionAdmitted, metav1.ConditionTrue, ReasonAdmitted, "Admitted by queue "+queueName, now)
	if len(checks) > 0 {
		// Quota is held; the checks decide when the job may start.
		u.Status.Phase = schedv1alpha1.QueueUnitPhaseReserved
		for _, name := range checks {
			u.Status.AdmissionChecks = append(u.Status.AdmissionChecks, schedv1alpha1.AdmissionCheckState{
				Name: name, State: schedv1alpha1.CheckStatePending, LastTransitionTime: now})
		}
		u.Status.Message = "waiting for admission checks " + strings.Join(checks, ", ")
		SetCondition(u, schedv1alpha1.ConditionAdmitted, metav1.ConditionFalse, ReasonAdmissionChecksPending, u.Status.Message, now)
	}
	if meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionEvicted) != nil {
		SetCondition(u, schedv1alpha1.ConditionEvicted, metav1.ConditionFalse, ReasonAdmitted, "Admitted again", now)
	}
}

// KeepRequeueCount is the requeue state an admission keeps: the count, which
// is cleared once the unit runs, without the time.
func KeepRequeueCount(rs *schedv1alpha1.RequeueState) *schedv1alpha1.RequeueState {
	if rs == nil || rs.Count == nil {
		return nil
	}
	return &schedv1alpha1.RequeueState{Count: rs.Count}
}

// AdmittedWith is what u was admitted with, per pod set: its
// status.admissions, else (an admission that recorded none) its spec, as
// AdmissionsFor counts it.
func AdmittedWith(u *schedv1alpha1.QueueUnit) []schedv1alpha1.Admission {
	if len(u.Status.Admissions) > 0 {
		return u.Status.Admissions
	}
	return AdmissionsFor(u)
}
