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
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// The tests of this file follow the table "Who writes what" of
// docs/protocol.md, one case per row, named after the row. Every expected
// value is read off the document (phases, condition types and reasons, the
// fields a row names), not off the code.

var (
	created = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1      = metav1.NewTime(created.Add(time.Minute))
	t2      = metav1.NewTime(created.Add(2 * time.Minute))
	t3      = metav1.NewTime(created.Add(3 * time.Minute))
)

// view is the part of a unit's status the rows speak of, in plain values.
type view struct {
	Phase      schedv1alpha1.QueueUnitPhase
	Message    string
	Quota      string
	Allocated  *time.Time
	Conditions []string // "Type=Status/Reason", sorted
	Admissions []string // "name replicas x cpu, running N, reclaim N"
	Checks     []string // "name=State"
	Reclaim    []string // reclaimablePods, "name=count"
	PodState   string
	RequeueAt  *time.Time
	ChargedCPU int64 // milli-cpu, by Usage
	Evicting   bool
}

func viewOf(u *schedv1alpha1.QueueUnit) view {
	v := view{Phase: u.Status.Phase, Message: u.Status.Message, Quota: u.Status.Quota, Evicting: IsEvicting(u)}
	if t := u.Status.LastAllocateTime; t != nil {
		v.Allocated = &t.Time
	}
	for _, c := range u.Status.Conditions {
		v.Conditions = append(v.Conditions, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	sort.Strings(v.Conditions)
	for _, a := range u.Status.Admissions {
		s := fmt.Sprintf("%s %d x %s, running %d", a.Name, a.Replicas, a.Resources.Cpu(), a.Running)
		if a.ReclaimState != nil {
			s += fmt.Sprintf(", reclaim %d", a.ReclaimState.Replicas)
		}
		v.Admissions = append(v.Admissions, s)
	}
	for _, c := range u.Status.AdmissionChecks {
		v.Checks = append(v.Checks, c.Name+"="+string(c.State))
	}
	for _, r := range u.Status.ReclaimablePods {
		v.Reclaim = append(v.Reclaim, fmt.Sprintf("%s=%d", r.Name, r.Count))
	}
	if p := u.Status.PodState; p != nil {
		v.PodState = fmt.Sprintf("running %d, pending %d", p.Running, p.Pending)
	}
	if rs := u.Status.RequeueState; rs != nil && rs.RequeueAt != nil {
		v.RequeueAt = &rs.RequeueAt.Time
	}
	v.ChargedCPU = Usage(u)[corev1.ResourceCPU]
	return v
}

func timePtr(t metav1.Time) *time.Time { return &t.Time }

// job is a unit for a job of two pod sets: a, 2 pods of 1 cpu, and b, 3 pods
// of 500m: 3500m in all.
func job() *schedv1alpha1.QueueUnit {
	return utiltesting.MakeQueueUnit("u", "ns").Quota("team-a").Created(created).
		PodSet("a", 2, "cpu", "1").PodSet("b", 3, "cpu", "500m").Obj()
}

func cpu(q string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
}

// admitted is job() as the scheduler left it on admission to quota team-a.
func admitted(phase schedv1alpha1.QueueUnitPhase) *schedv1alpha1.QueueUnit {
	u := job()
	u.Status.Phase = phase
	u.Status.Quota = "team-a"
	u.Status.LastAllocateTime = &t1
	u.Status.Admissions = []schedv1alpha1.Admission{
		{Name: "a", Replicas: 2, Resources: cpu("1")},
		{Name: "b", Replicas: 3, Resources: cpu("500m")},
	}
	u.Status.Conditions = []metav1.Condition{
		{Type: schedv1alpha1.ConditionQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved", LastTransitionTime: t1},
		{Type: schedv1alpha1.ConditionAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted", LastTransitionTime: t1},
	}
	return u
}

// TestWhoWritesWhat has one case per row of the table.
func TestWhoWritesWhat(t *testing.T) {
	for _, tc := range []struct {
		row   string
		unit  func() *schedv1alpha1.QueueUnit
		write func(u *schedv1alpha1.QueueUnit)
		want  view
	}{
		{
			row:   "status.phase = Enqueued (first sight): scheduler, a unit with an empty phase",
			unit:  job,
			write: func(u *schedv1alpha1.QueueUnit) { MarkEnqueued(u, t1) },
			want:  view{Phase: "Enqueued"},
		},
		{
			row:  "status.phase = Reserved / Dequeued, admissions, lastAllocateTime, quota, conditions QuotaReserved, Admitted: scheduler, on admission",
			unit: func() *schedv1alpha1.QueueUnit { u := job(); u.Status.Phase = "Enqueued"; return u },
			write: func(u *schedv1alpha1.QueueUnit) {
				MarkAdmitted(u, "team-a", "team-a", AdmissionsFor(u), nil, t1)
			},
			want: view{Phase: "Dequeued", Quota: "team-a", Allocated: timePtr(t1),
				Conditions: []string{"Admitted=True/Admitted", "QuotaReserved=True/QuotaReserved"},
				Admissions: []string{"a 2 x 1, running 0", "b 3 x 500m, running 0"},
				ChargedCPU: 3500},
		},
		{
			row:  "status.phase = Reserved with admissionChecks: scheduler, on admission by a queue that requires checks",
			unit: func() *schedv1alpha1.QueueUnit { u := job(); u.Status.Phase = "Enqueued"; return u },
			write: func(u *schedv1alpha1.QueueUnit) {
				MarkAdmitted(u, "team-a", "team-a", AdmissionsFor(u), []string{"A", "B"}, t1)
			},
			// "A Reserved unit (quota held) waits for its admission checks:
			// status.message is `waiting for admission checks A, B` ... with
			// condition Admitted=False, reason AdmissionChecksPending".
			want: view{Phase: "Reserved", Quota: "team-a", Allocated: timePtr(t1), Message: "waiting for admission checks A, B",
				Conditions: []string{"Admitted=False/AdmissionChecksPending", "QuotaReserved=True/QuotaReserved"},
				Admissions: []string{"a 2 x 1, running 0", "b 3 x 500m, running 0"},
				Checks:     []string{"A=Pending", "B=Pending"},
				ChargedCPU: 3500},
		},
		{
			row:  "status.message, condition QuotaReserved=False with the reason of the wait: scheduler, while a unit waits",
			unit: func() *schedv1alpha1.QueueUnit { u := job(); u.Status.Phase = "Enqueued"; return u },
			write: func(u *schedv1alpha1.QueueUnit) {
				SetWaiting(u, "InsufficientQuota", "insufficient quota: ...", t1)
			},
			want: view{Phase: "Enqueued", Message: "insufficient quota: ...",
				Conditions: []string{"QuotaReserved=False/InsufficientQuota"}},
		},
		{
			row:  "condition Evicted=True (reason Preempted), admissions[].reclaimState: scheduler, it wants the unit's quota back",
			unit: func() *schedv1alpha1.QueueUnit { return admitted("Running") },
			write: func(u *schedv1alpha1.QueueUnit) {
				MarkEvicted(u, schedv1alpha1.ReasonPreempted, "Preempted to admit ns/v", t2)
			},
			// It still holds its quota until the extension hands it back.
			want: view{Phase: "Running", Quota: "team-a", Allocated: timePtr(t1), Evicting: true,
				Conditions: []string{"Admitted=True/Admitted", "Evicted=True/Preempted", "QuotaReserved=True/QuotaReserved"},
				Admissions: []string{"a 2 x 1, running 0, reclaim 2", "b 3 x 500m, running 0, reclaim 3"},
				ChargedCPU: 3500},
		},
		{
			row:  "condition Evicted=True (reason Deactivated): scheduler, it wants the unit's quota back",
			unit: func() *schedv1alpha1.QueueUnit { return admitted("Dequeued") },
			write: func(u *schedv1alpha1.QueueUnit) {
				MarkEvicted(u, schedv1alpha1.ReasonDeactivated, "Deactivated: spec.active is false", t2)
			},
			want: view{Phase: "Dequeued", Quota: "team-a", Allocated: timePtr(t1), Evicting: true,
				Conditions: []string{"Admitted=True/Admitted", "Evicted=True/Deactivated", "QuotaReserved=True/QuotaReserved"},
				Admissions: []string{"a 2 x 1, running 0, reclaim 2", "b 3 x 500m, running 0, reclaim 3"},
				ChargedCPU: 3500},
		},
		{
			row:  "condition Evicted=True (reason MaximumExecutionTimeExceeded): scheduler, it wants the unit's quota back",
			unit: func() *schedv1alpha1.QueueUnit { return admitted("Running") },
			write: func(u *schedv1alpha1.QueueUnit) {
				MarkEvicted(u, schedv1alpha1.ReasonMaximumExecutionTimeExceeded, "Execution budget of 1m0s used up", t2)
			},
			want: view{Phase: "Running", Quota: "team-a", Allocated: timePtr(t1), Evicting: true,
				Conditions: []string{"Admitted=True/Admitted", "Evicted=True/MaximumExecutionTimeExceeded", "QuotaReserved=True/QuotaReserved"},
				Admissions: []string{"a 2 x 1, running 0, reclaim 2", "b 3 x 500m, running 0, reclaim 3"},
				ChargedCPU: 3500},
		},
		{
			row:  "status.phase = Running, status.podState, status.admissions[].running, status.reclaimablePods, condition PodsReady: extension, from the job's pods",
			unit: func() *schedv1alpha1.QueueUnit { return admitted("Dequeued") },
			write: func(u *schedv1alpha1.QueueUnit) {
				// a: both pods run; b: one runs, two finished.
				ReportPods(u, []PodSetPods{{Name: "a", Running: 2}, {Name: "b", Running: 1, Finished: 2}}, t2)
			},
			// "less status.reclaimablePods (finished pods give their share
			// back)": 2 x 1 + (3 - 2) x 500m.
			want: view{Phase: "Running", Quota: "team-a", Allocated: timePtr(t1), PodState: "running 3, pending 0",
				Conditions: []string{"Admitted=True/Admitted", "PodsReady=True/PodsRunning", "QuotaReserved=True/QuotaReserved"},
				Admissions: []string{"a 2 x 1, running 2", "b 3 x 500m, running 1"},
				Reclaim:    []string{"b=2"},
				ChargedCPU: 2500},
		},
		{
			row:  "condition PodsRefusedByQuota: extension, beside Koordinator: koord-scheduler refuses pods of an admitted unit for quota",
			unit: func() *schedv1alpha1.QueueUnit { return admitted("Dequeued") },
			write: func(u *schedv1alpha1.QueueUnit) {
				MarkRefusedByQuota(u, "pod p: 0/1 nodes are available: Insufficient quotas, ...", t2)
			},
			// The unit keeps its quota and phase: only the timeout sends it back.
			want: view{Phase: "Dequeued", Quota: "team-a", Allocated: timePtr(t1),
				Conditions: []string{"Admitted=True/Admitted", "PodsRefusedByQuota=True/PodsRefusedByQuota", "QuotaReserved=True/QuotaReserved"},
				Admissions: []string{"a 2 x 1, running 0", "b 3 x 500m, running 0"},
				ChargedCPU: 3500},
		},
		{
			row:  "status.phase = Succeed / Failed, condition Finished: extension, the job finished",
			unit: func() *schedv1alpha1.QueueUnit { return admitted("Running") },
			write: func(u *schedv1alpha1.QueueUnit) {
				MarkFinished(u, false, "", t2)
			},
			// "Any other phase charges nothing."
			want: view{Phase: "Succeed", Quota: "team-a", Allocated: timePtr(t1),
				Conditions: []string{"Admitted=True/Admitted", "Finished=True/JobSucceeded", "QuotaReserved=True/QuotaReserved"},
				Admissions: []string{"a 2 x 1, running 0", "b 3 x 500m, running 0"}},
		},
		{
			row: "status.phase = Enqueued after eviction (admissions cleared, QuotaReserved/Admitted false): extension, the evicted job is suspended and has no active pods left",
			unit: func() *schedv1alpha1.QueueUnit {
				u := admitted("Running")
				MarkEvicted(u, schedv1alpha1.ReasonPreempted, "Preempted", t2)
				return u
			},
			write: func(u *schedv1alpha1.QueueUnit) {
				Requeue(u, ReasonRequeued, "evicted job is suspended and holds no pods", t3)
			},
			want: view{Phase: "Enqueued", Quota: "team-a", Allocated: timePtr(t1),
				Conditions: []string{"Admitted=False/Requeued", "Evicted=True/Preempted", "QuotaReserved=False/Requeued"}},
		},
		{
			row:  "status.phase = Enqueued after the job grew beyond its admission (same clearing, reason JobGrew): extension, the grown job is suspended and has no active pods left",
			unit: func() *schedv1alpha1.QueueUnit { return admitted("Running") },
			write: func(u *schedv1alpha1.QueueUnit) {
				Requeue(u, ReasonJobGrew, "pod set a grew from 2 to 3 pods: queued again at its new size", t2)
			},
			want: view{Phase: "Enqueued", Quota: "team-a", Allocated: timePtr(t1),
				Conditions: []string{"Admitted=False/JobGrew", "QuotaReserved=False/JobGrew"}},
		},
		{
			row: "metadata.finalizers scheduling.x-k8s.io/pods-gone: extension, removed when the deleted unit's job has no pods left",
			unit: func() *schedv1alpha1.QueueUnit {
				u := admitted("Running")
				u.Finalizers = []string{"scheduling.x-k8s.io/pods-gone"}
				u.DeletionTimestamp = &t2
				return u
			},
			write: func(*schedv1alpha1.QueueUnit) {},
			// "A unit being deleted keeps its charge until it is gone."
			want: view{Phase: "Running", Quota: "team-a", Allocated: timePtr(t1),
				Conditions: []string{"Admitted=True/Admitted", "QuotaReserved=True/QuotaReserved"},
				Admissions: []string{"a 2 x 1, running 0", "b 3 x 500m, running 0"},
				ChargedCPU: 3500},
		},
		{
			row:  "status.phase = TimeoutBackoff: extension (runningTimeout)",
			unit: func() *schedv1alpha1.QueueUnit { return admitted("Dequeued") },
			write: func(u *schedv1alpha1.QueueUnit) {
				MarkRunningTimeout(u, "pods did not run within the running timeout 1m0s", t2)
			},
			want: view{Phase: "TimeoutBackoff", Quota: "team-a", Allocated: timePtr(t1),
				Conditions: []string{"Admitted=False/RunningTimeout", "Evicted=True/BackoffTimeout", "QuotaReserved=False/RunningTimeout"}},
		},
		{
			row: "status.phase = TimeoutBackoff, then Enqueued after the backoff: extension (runningTimeout)",
			unit: func() *schedv1alpha1.QueueUnit {
				u := admitted("Dequeued")
				MarkRunningTimeout(u, "pods did not run within the running timeout 1m0s", t2)
				return u
			},
			write: func(u *schedv1alpha1.QueueUnit) {
				Requeue(u, ReasonRequeued, "backoff after running timeout is over", t3)
			},
			want: view{Phase: "Enqueued", Quota: "team-a", Allocated: timePtr(t1),
				Conditions: []string{"Admitted=False/Requeued", "Evicted=True/BackoffTimeout", "QuotaReserved=False/Requeued"}},
		},
		{
			row: "status.phase = Dequeued from Reserved: scheduler (admission checks), all Ready",
			unit: func() *schedv1alpha1.QueueUnit {
				u := job()
				MarkAdmitted(u, "team-a", "team-a", AdmissionsFor(u), []string{"A"}, t1)
				u.Status.AdmissionChecks[0].State = schedv1alpha1.CheckStateReady
				return u
			},
			write: func(u *schedv1alpha1.QueueUnit) { MarkChecksReady(u, t2) },
			want: view{Phase: "Dequeued", Quota: "team-a", Allocated: timePtr(t1),
				Conditions: []string{"Admitted=True/Admitted", "QuotaReserved=True/QuotaReserved"},
				Admissions: []string{"a 2 x 1, running 0", "b 3 x 500m, running 0"},
				Checks:     []string{"A=Ready"},
				ChargedCPU: 3500},
		},
		{
			row: "status.phase = TimeoutBackoff: scheduler (admission checks), Retry, Rejected or no answer within admissionCheckTimeout",
			unit: func() *schedv1alpha1.QueueUnit {
				u := job()
				MarkAdmitted(u, "team-a", "team-a", AdmissionsFor(u), []string{"A"}, t1)
				return u
			},
			write: func(u *schedv1alpha1.QueueUnit) {
				MarkChecksBackoff(u, "AdmissionCheckTimeout", "admission check A did not answer", t3.Time, 1, t2)
			},
			want: view{Phase: "TimeoutBackoff", Quota: "team-a", Allocated: timePtr(t1), Message: "admission check A did not answer",
				Conditions: []string{"Admitted=False/AdmissionCheckTimeout", "QuotaReserved=False/AdmissionCheckTimeout"},
				Checks:     []string{"A=Pending"}, RequeueAt: timePtr(t3)},
		},
		{
			row: "status.phase = TimeoutBackoff, then Enqueued after the backoff: scheduler (admission checks)",
			unit: func() *schedv1alpha1.QueueUnit {
				u := job()
				MarkAdmitted(u, "team-a", "team-a", AdmissionsFor(u), []string{"A"}, t1)
				MarkChecksBackoff(u, "AdmissionCheckRejected", "admission check A rejected the unit", t3.Time, 0, t2)
				return u
			},
			write: func(u *schedv1alpha1.QueueUnit) { EndChecksBackoff(u, t3) },
			want: view{Phase: "Enqueued", Quota: "team-a", Allocated: timePtr(t1), Message: "back in queue after the admission check backoff",
				Conditions: []string{"Admitted=False/AdmissionCheckRejected", "QuotaReserved=False/AdmissionCheckRejected"},
				RequeueAt:  timePtr(t3)},
		},
	} {
		t.Run(tc.row, func(t *testing.T) {
			u := tc.unit()
			tc.write(u)
			if diff := cmp.Diff(tc.want, viewOf(u)); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}
