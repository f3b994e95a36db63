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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// The rules of docs/protocol.md beyond the table, one test each.

func condition(u *schedv1alpha1.QueueUnit, t string) *metav1.Condition {
	return meta.FindStatusCondition(u.Status.Conditions, t)
}

// "A QuotaReserved condition added this way dates from the unit's creation
// (it never held quota); one already False keeps its time."
func TestSetWaitingTimes(t *testing.T) {
	u := job()
	u.Status.Phase = schedv1alpha1.QueueUnitPhaseEnqueued
	if !SetWaiting(u, "InsufficientQuota", "first", t1) {
		t.Fatal("a first report changed nothing")
	}
	if c := condition(u, schedv1alpha1.ConditionQuotaReserved); !c.LastTransitionTime.Time.Equal(created) {
		t.Errorf("new condition dates from %v, want the creation %v", c.LastTransitionTime, created)
	}
	if SetWaiting(u, "InsufficientQuota", "first", t2) {
		t.Error("the same report was written twice")
	}
	if !SetWaiting(u, "WaitingInLine", "second", t2) {
		t.Fatal("a new reason changed nothing")
	}
	c := condition(u, schedv1alpha1.ConditionQuotaReserved)
	if !c.LastTransitionTime.Time.Equal(created) || c.Reason != "WaitingInLine" || c.Message != "second" || u.Status.Message != "second" {
		t.Errorf("after a second reason: condition %+v, message %q; want reason WaitingInLine, message second, time kept", c, u.Status.Message)
	}
	if got := WaitingSince(u); !got.Equal(created) {
		t.Errorf("waiting since %v, want the creation %v", got, created)
	}
}

// A unit that gave its quota back waits since then; one that never held it,
// since its creation.
func TestWaitingSince(t *testing.T) {
	never := job()
	if got := WaitingSince(never); !got.Equal(created) {
		t.Errorf("new unit waits since %v, want %v", got, created)
	}
	back := admitted(schedv1alpha1.QueueUnitPhaseRunning)
	Requeue(back, ReasonRequeued, "evicted", t2)
	if got := WaitingSince(back); !got.Equal(t2.Time) {
		t.Errorf("requeued unit waits since %v, want %v", got, t2.Time)
	}
}

func TestMarkEnqueuedOnlyFirstSight(t *testing.T) {
	u := admitted(schedv1alpha1.QueueUnitPhaseRunning)
	if MarkEnqueued(u, t2) || u.Status.Phase != schedv1alpha1.QueueUnitPhaseRunning {
		t.Errorf("a unit with a phase was marked Enqueued: %s", u.Status.Phase)
	}
}

// An admission turns an earlier Evicted False, keeps the requeue count but
// not its time, and counts one attempt.
func TestMarkAdmittedAgain(t *testing.T) {
	u := admitted(schedv1alpha1.QueueUnitPhaseRunning)
	MarkEvicted(u, schedv1alpha1.ReasonPreempted, "Preempted", t2)
	Requeue(u, ReasonRequeued, "evicted", t2)
	u.Status.Attempts = 4
	u.Status.RequeueState = &schedv1alpha1.RequeueState{Count: ptr.To(int32(2)), RequeueAt: &t2}
	MarkAdmitted(u, "team-b", "team-b", AdmissionsFor(u), nil, t3)
	if c := condition(u, schedv1alpha1.ConditionEvicted); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Evicted after a new admission: %+v, want False", c)
	}
	if IsEvicting(u) {
		t.Error("a unit admitted again is still evicting")
	}
	want := &schedv1alpha1.RequeueState{Count: ptr.To(int32(2))}
	if diff := cmp.Diff(want, u.Status.RequeueState); diff != "" {
		t.Errorf("requeue state (-want +got):\n%s", diff)
	}
	if u.Status.Attempts != 5 || u.Status.Quota != "team-b" {
		t.Errorf("attempts %d, quota %q; want 5, team-b", u.Status.Attempts, u.Status.Quota)
	}
	if KeepRequeueCount(&schedv1alpha1.RequeueState{RequeueAt: &t2}) != nil {
		t.Error("a requeue state without a count was kept")
	}
}

// The scheduler asks once; a unit that holds nothing has nothing to give.
func TestMarkEvictedGuards(t *testing.T) {
	u := admitted(schedv1alpha1.QueueUnitPhaseRunning)
	if !MarkEvicted(u, schedv1alpha1.ReasonPreempted, "first", t2) {
		t.Fatal("first eviction refused")
	}
	if MarkEvicted(u, schedv1alpha1.ReasonDeactivated, "second", t3) {
		t.Error("a unit being evicted was evicted again")
	}
	if c := condition(u, schedv1alpha1.ConditionEvicted); c.Reason != schedv1alpha1.ReasonPreempted {
		t.Errorf("reason %s, want the first one, Preempted", c.Reason)
	}
	for _, p := range []schedv1alpha1.QueueUnitPhase{"", "Enqueued", "TimeoutBackoff", "Succeed", "Failed"} {
		w := job()
		w.Status.Phase = p
		if MarkEvicted(w, schedv1alpha1.ReasonPreempted, "x", t2) || len(w.Status.Conditions) != 0 {
			t.Errorf("a unit in phase %q, which holds nothing, was evicted", p)
		}
	}
}

// An Evicted=True from before the last admission asks nothing any more; the
// next eviction dates from its own time.
func TestStaleEviction(t *testing.T) {
	u := admitted(schedv1alpha1.QueueUnitPhaseRunning)
	u.Status.Conditions = append(u.Status.Conditions, metav1.Condition{
		Type: schedv1alpha1.ConditionEvicted, Status: metav1.ConditionTrue, Reason: schedv1alpha1.ReasonPreempted,
		LastTransitionTime: metav1.NewTime(created)})
	if IsEvicting(u) {
		t.Fatal("an eviction older than the admission counts")
	}
	if !MarkEvicted(u, schedv1alpha1.ReasonDeactivated, "now", t2) {
		t.Fatal("the unit could not be evicted again")
	}
	if c := condition(u, schedv1alpha1.ConditionEvicted); !c.LastTransitionTime.Equal(&t2) || c.Reason != schedv1alpha1.ReasonDeactivated {
		t.Errorf("eviction %+v, want Deactivated at %v", c, t2)
	}
	if !IsEvicting(u) {
		t.Error("the new eviction does not count")
	}
}

// Whose TimeoutBackoff: the checks' is the scheduler's, any other reason the
// extension's.
func TestBackoffOwners(t *testing.T) {
	ext := admitted(schedv1alpha1.QueueUnitPhaseDequeued)
	MarkRunningTimeout(ext, "pods did not run", t2)
	checks := job()
	MarkAdmitted(checks, "team-a", "team-a", AdmissionsFor(checks), []string{"A"}, t1)
	MarkChecksBackoff(checks, ReasonAdmissionCheckRetry, "retry", t3.Time, 1, t2)
	if !InRunningTimeoutBackoff(ext) || InChecksBackoff(ext) {
		t.Error("the running timeout's backoff is not the extension's")
	}
	if InRunningTimeoutBackoff(checks) || !InChecksBackoff(checks) {
		t.Error("the checks' backoff is not the scheduler's")
	}
	if got := BackoffStarted(ext); !got.Equal(&t2) {
		t.Errorf("backoff started %v, want %v", got, t2)
	}
	if EndChecksBackoff(ext, t3) {
		t.Error("the scheduler ended the extension's backoff")
	}
	if MarkChecksReady(ext, t3) || MarkChecksBackoff(ext, ReasonAdmissionCheckRetry, "x", t3.Time, 0, t3) {
		t.Error("checks were decided for a unit that is not Reserved")
	}
}

// The running timeout counts from Dequeued: Admitted=True's time, which may
// be later than the reservation.
func TestDequeuedAt(t *testing.T) {
	u := job()
	MarkAdmitted(u, "team-a", "team-a", AdmissionsFor(u), []string{"A"}, t1)
	MarkChecksReady(u, t2)
	if got := DequeuedAt(u); !got.Equal(&t2) {
		t.Errorf("dequeued at %v, want %v (checks Ready), not the reservation %v", got, t2, t1)
	}
	bare := job()
	if got := DequeuedAt(bare); !got.Time.Equal(created) {
		t.Errorf("a unit that tells nothing: %v, want its creation", got)
	}
}

// "maximumExecutionTimeSeconds counted from PodsReady"; a run's time is
// banked when the unit is evicted.
func TestExecutionBudget(t *testing.T) {
	u := admitted(schedv1alpha1.QueueUnitPhaseRunning)
	u.Spec.MaximumExecutionTimeSeconds = ptr.To(int32(600))
	if Budget(u) != 10*time.Minute {
		t.Errorf("budget %v, want 10m", Budget(u))
	}
	if got := ExecutionUsed(u, t3.Time); got != 0 {
		t.Errorf("used %v before PodsReady, want 0", got)
	}
	ReportPods(u, []PodSetPods{{Name: "a", Running: 2}, {Name: "b", Running: 3}}, t1)
	if got := ExecutionUsed(u, t3.Time); got != 2*time.Minute {
		t.Errorf("used %v two minutes after PodsReady, want 2m", got)
	}
	BankExecutionTime(u, t3.Time)
	if got := ptr.Deref(u.Status.AccumulatedPastExecutionTimeSeconds, 0); got != 120 {
		t.Errorf("banked %ds, want 120", got)
	}
	Requeue(u, ReasonRequeued, "evicted", t3)
	if got := ExecutionUsed(u, t3.Add(time.Hour)); got != 2*time.Minute {
		t.Errorf("used %v while waiting, want the banked 2m", got)
	}
	before := *u.Status.AccumulatedPastExecutionTimeSeconds
	BankExecutionTime(u, t3.Add(time.Hour))
	if *u.Status.AccumulatedPastExecutionTimeSeconds != before {
		t.Error("a unit that does not run banked time")
	}
}

// Finished pods give their share back, at most the set's count; PodsReady
// only once no started pod is pending.
func TestReportPods(t *testing.T) {
	u := admitted(schedv1alpha1.QueueUnitPhaseDequeued)
	ReportPods(u, []PodSetPods{{Name: "a", Running: 1, Pending: 1}, {Name: "b", Finished: 9}}, t2)
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseRunning {
		t.Errorf("phase %s with a pod running, want Running", u.Status.Phase)
	}
	if condition(u, schedv1alpha1.ConditionPodsReady) != nil {
		t.Error("PodsReady with a pod pending")
	}
	if diff := cmp.Diff([]schedv1alpha1.ReclaimablePod{{Name: "b", Count: 3}}, u.Status.ReclaimablePods); diff != "" {
		t.Errorf("reclaimable pods (-want +got):\n%s", diff)
	}
	waiting := job()
	ReportPods(waiting, nil, t2)
	if waiting.Status.PodState != nil || waiting.Status.Phase != "" {
		t.Errorf("a job without pods: podState %v, phase %q", waiting.Status.PodState, waiting.Status.Phase)
	}
}

func TestMarkFinishedFailed(t *testing.T) {
	u := admitted(schedv1alpha1.QueueUnitPhaseRunning)
	MarkFinished(u, true, "BackoffLimitExceeded", t2)
	c := condition(u, schedv1alpha1.ConditionFinished)
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseFailed || c.Reason != ReasonJobFailed || c.Message != "BackoffLimitExceeded" {
		t.Errorf("phase %s, condition %+v; want Failed, JobFailed with the job's message", u.Status.Phase, c)
	}
}

// What an admission records: per pod set, or one default replica of the
// whole request.
func TestAdmissionsFor(t *testing.T) {
	sets := job()
	if got := viewOf(&schedv1alpha1.QueueUnit{Status: schedv1alpha1.QueueUnitStatus{Admissions: AdmissionsFor(sets)}}).Admissions; !cmp.Equal(got, []string{"a 2 x 1, running 0", "b 3 x 500m, running 0"}) {
		t.Errorf("pod sets admitted as %v", got)
	}
	whole := utiltesting.MakeQueueUnit("w", "ns").Request(corev1.ResourceCPU, "4").Obj()
	if got := viewOf(&schedv1alpha1.QueueUnit{Status: schedv1alpha1.QueueUnitStatus{Admissions: AdmissionsFor(whole)}}).Admissions; !cmp.Equal(got, []string{"default 1 x 4, running 0"}) {
		t.Errorf("a unit without pod sets admitted as %v", got)
	}
	more := job()
	more.Spec.Resource = cpu("5") // the job says more than its sets add up to
	if got := viewOf(&schedv1alpha1.QueueUnit{Status: schedv1alpha1.QueueUnitStatus{Admissions: AdmissionsFor(more)}}).Admissions; !cmp.Equal(got, []string{"default 1 x 5, running 0"}) {
		t.Errorf("a unit whose spec.resource exceeds its sets admitted as %v", got)
	}
	recorded := admitted(schedv1alpha1.QueueUnitPhaseRunning)
	recorded.Status.Admissions = recorded.Status.Admissions[:1]
	if got := AdmittedWith(recorded); len(got) != 1 || got[0].Name != "a" {
		t.Errorf("admitted with %v, want the recorded admission of a", got)
	}
	if got := AdmittedWith(sets); len(got) != 2 {
		t.Errorf("no admission recorded: admitted with %v, want its two sets", got)
	}
}

// "Quota: the label quota.scheduling.koordinator.sh/name, else spec.queue,
// for a unit that waits. A unit that holds quota is charged to status.quota."
func TestQuotaOfAUnit(t *testing.T) {
	labelled := utiltesting.MakeQueueUnit("u", "ns").Quota("team-a").Queue("other").Obj()
	queued := utiltesting.MakeQueueUnit("u", "ns").Queue("other").Obj()
	relabelled := admitted(schedv1alpha1.QueueUnitPhaseRunning)
	relabelled.Labels[schedv1alpha1.QuotaNameLabel] = "team-b"
	old := admitted(schedv1alpha1.QueueUnitPhaseRunning)
	old.Status.Quota = ""
	done := admitted(schedv1alpha1.QueueUnitPhaseSucceed)
	done.Labels[schedv1alpha1.QuotaNameLabel] = "team-b"
	for _, tc := range []struct {
		name          string
		unit          *schedv1alpha1.QueueUnit
		quota, charge string
	}{
		{name: "label first", unit: labelled, quota: "team-a"},
		{name: "else spec.queue", unit: queued, quota: "other"},
		{name: "holding: status.quota, whatever the label says", unit: relabelled, quota: "team-a", charge: "team-a"},
		{name: "holding, admitted before status.quota: its label", unit: old, quota: "team-a", charge: "team-a"},
		{name: "finished: charged nothing, asks its label", unit: done, quota: "team-b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := QuotaOf(tc.unit); got != tc.quota {
				t.Errorf("quota %q, want %q", got, tc.quota)
			}
			if got := ChargedQuota(tc.unit); got != tc.charge {
				t.Errorf("charged to %q, want %q", got, tc.charge)
			}
		})
	}
}

func TestPriorityAndActive(t *testing.T) {
	u := job()
	if Priority(u) != 0 || !IsActive(u) {
		t.Errorf("unset: priority %d, active %v; want 0, true", Priority(u), IsActive(u))
	}
	u.Spec.Priority, u.Spec.Active = ptr.To(int32(7)), ptr.To(false)
	if Priority(u) != 7 || IsActive(u) {
		t.Errorf("set: priority %d, active %v; want 7, false", Priority(u), IsActive(u))
	}
}

// "Queue: the Queue named like the quota ..., else spec.queue."
func TestQueueOf(t *testing.T) {
	if got := QueueOf(utiltesting.MakeQueueUnit("u", "ns").Quota("team-a").Queue("other").Obj()); got != "team-a" {
		t.Errorf("queue %q, want the one named like the quota label, team-a", got)
	}
	if got := QueueOf(utiltesting.MakeQueueUnit("u", "ns").Queue("other").Obj()); got != "other" {
		t.Errorf("queue %q, want spec.queue, other", got)
	}
}
