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

package scheduler

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/admissioncheck"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// reservedFixture has unit a admitted as Reserved by queue team-a, which
// requires AdmissionCheck prov (retryDelayMinutes as given, nil: none). The
// lifecycle controller has not looked at it yet.
func reservedFixture(t *testing.T, retryDelayMinutes *int64) *fixture {
	t.Helper()
	f := newFixture(t, nil)
	ac := &schedv1alpha1.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "prov"},
		Spec: schedv1alpha1.AdmissionCheckSpec{ControllerName: "test", RetryDelayMinutes: retryDelayMinutes}}
	if err := f.c.Create(f.ctx, ac); err != nil {
		t.Fatal(err)
	}
	f.plugin.setCapacity("team-a", 4)
	f.addQueue(t, utiltesting.MakeQueue("team-a").AdmissionCheck("prov", nil).Obj())
	f.addUnit(t, makeUnit("a", "team-a", "1").Obj())
	f.pass(t)
	if got := f.get(t, "a").Status.Phase; got != schedv1alpha1.QueueUnitPhaseReserved {
		t.Fatalf("phase = %s, want Reserved", got)
	}
	if !f.lifecycleDue() {
		t.Fatal("the reserved unit was not handed to the lifecycle controller")
	}
	f.takeEvents()
	return f
}

// answer writes check prov's state as its controller would, and feeds it.
func (f *fixture) answer(t *testing.T, state schedv1alpha1.AdmissionCheckStateType, message string) {
	t.Helper()
	f.extension(t, "a", func(u *schedv1alpha1.QueueUnit) {
		u.Status.AdmissionChecks[0].State = state
		u.Status.AdmissionChecks[0].Message = message
	})
}

func (f *fixture) lifecycleDue() bool { return f.s.lifecycle.queue.Len() > 0 }

func TestLifecycleChecksReadyDequeueTheUnit(t *testing.T) {
	f := reservedFixture(t, nil)
	f.answer(t, schedv1alpha1.CheckStateReady, "")
	f.lifecycleRun(t)
	u := f.get(t, "a")
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseDequeued || u.Status.Message != "" {
		t.Fatalf("status = %s %q, want Dequeued with no message", u.Status.Phase, u.Status.Message)
	}
	if c := condition(u, schedv1alpha1.ConditionAdmitted); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("Admitted = %+v, want True", c)
	}
	if h, ok := f.plugin.chargedTo("ns/a"); !ok || h.Used["cpu"] != 1000 {
		t.Fatalf("the dequeued unit is charged %+v, want its CPU", h)
	}
}

// Retry and Rejected release the reservation until requeueAt (TimeoutBackoff,
// QuotaReserved=False with the check's reason, a Warning event), and the unit
// is Enqueued again once the clock passes requeueAt.
func TestLifecycleRetryOrRejectBacksOffThenRequeues(t *testing.T) {
	for _, tc := range []struct {
		name       string
		state      schedv1alpha1.AdmissionCheckStateType
		retryDelay *int64
		reason     string
		message    string
		backoff    time.Duration
	}{
		{"retry", schedv1alpha1.CheckStateRetry, nil, queueunit.ReasonAdmissionCheckRetry,
			"admission check prov asked to retry: no capacity", admissioncheck.BackoffBase},
		{"retry after the check's delay", schedv1alpha1.CheckStateRetry, ptr.To[int64](2), queueunit.ReasonAdmissionCheckRetry,
			"admission check prov asked to retry: no capacity", 2 * time.Minute},
		{"rejected", schedv1alpha1.CheckStateRejected, ptr.To[int64](2), queueunit.ReasonAdmissionCheckRejected,
			"admission check prov rejected the unit: no capacity", admissioncheck.BackoffBase},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := reservedFixture(t, tc.retryDelay)
			f.answer(t, tc.state, "no capacity")
			f.lifecycleRun(t)
			u := f.get(t, "a")
			if u.Status.Phase != schedv1alpha1.QueueUnitPhaseTimeoutBackoff || len(u.Status.Admissions) != 0 {
				t.Fatalf("status = %s with %d admissions, want TimeoutBackoff with none", u.Status.Phase, len(u.Status.Admissions))
			}
			requeueAt := testStart.Add(tc.backoff)
			if rs := u.Status.RequeueState; rs == nil || rs.RequeueAt == nil || !rs.RequeueAt.Time.Equal(requeueAt) {
				t.Fatalf("requeueState = %+v, want requeueAt %v", rs, requeueAt)
			}
			for _, ct := range []string{schedv1alpha1.ConditionQuotaReserved, schedv1alpha1.ConditionAdmitted} {
				if c := condition(u, ct); c == nil || c.Status != metav1.ConditionFalse || c.Reason != tc.reason || c.Message != tc.message {
					t.Errorf("%s = %+v, want False %s %q", ct, c, tc.reason, tc.message)
				}
			}
			want := "Warning " + tc.reason + " " + tc.message + "; the reservation is released until " + requeueAt.Format(time.RFC3339)
			if got := eventsWith(f.takeEvents(), want); len(got) != 1 {
				t.Errorf("want one event %q", want)
			}

			// Seen back: the reservation is released, and the unit waits
			// for requeueAt on the clock.
			f.timerSet(t, func() {
				f.sync(t)
				f.lifecycleRun(t)
			})
			if _, ok := f.plugin.chargedTo("ns/a"); ok {
				t.Fatal("a unit in backoff is still charged")
			}
			if f.pendingIn("team-a", "ns/a") {
				t.Fatal("a unit in backoff waits in its queue")
			}
			f.step(t, tc.backoff-time.Second, nil)
			if f.lifecycleDue() {
				t.Fatal("the backoff ended early")
			}
			f.step(t, time.Second, f.lifecycleDue)
			f.lifecycleRun(t)
			f.sync(t)
			u = f.get(t, "a")
			if u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued || u.Status.AdmissionChecks != nil {
				t.Fatalf("status = %s checks %v, want Enqueued, checks cleared", u.Status.Phase, u.Status.AdmissionChecks)
			}
			if !f.pendingIn("team-a", "ns/a") {
				t.Fatal("the unit is not back in its queue after the backoff")
			}
		})
	}
}

// No answer within admissionCheckTimeout (counted from lastAllocateTime):
// TimeoutBackoff with reason AdmissionCheckTimeout, at that moment on the
// clock.
func TestLifecycleCheckTimeoutBacksOff(t *testing.T) {
	f := newFixture(t, nil)
	if err := f.c.Create(f.ctx, &schedv1alpha1.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "prov"},
		Spec: schedv1alpha1.AdmissionCheckSpec{ControllerName: "test"}}); err != nil {
		t.Fatal(err)
	}
	f.plugin.setCapacity("team-a", 4)
	f.addQueue(t, utiltesting.MakeQueue("team-a").AdmissionCheck("prov", nil).Obj())
	f.addUnit(t, makeUnit("a", "team-a", "1").Obj())
	f.pass(t)
	f.timerSet(t, func() { f.lifecycleRun(t) })
	timeout := f.s.env.opts.Config.AdmissionCheckTimeout.Duration
	f.step(t, timeout-time.Second, nil)
	if f.lifecycleDue() {
		t.Fatal("the check timed out early")
	}
	f.step(t, time.Second, f.lifecycleDue)
	f.lifecycleRun(t)
	u := f.get(t, "a")
	c := condition(u, schedv1alpha1.ConditionQuotaReserved)
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseTimeoutBackoff || c == nil || c.Reason != queueunit.ReasonAdmissionCheckTimeout {
		t.Fatalf("status = %s, QuotaReserved %+v; want TimeoutBackoff, AdmissionCheckTimeout", u.Status.Phase, c)
	}
	if want := "admission checks prov did not answer within 10m0s"; c.Message != want {
		t.Errorf("message = %q, want %q", c.Message, want)
	}
}

// A check that names no AdmissionCheck is said in the message and with one
// Warning event.
func TestLifecycleMissingCheckIsToldOnce(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 4)
	f.addQueue(t, utiltesting.MakeQueue("team-a").AdmissionCheck("ghost", nil).Obj())
	f.addUnit(t, makeUnit("a", "team-a", "1").Obj())
	f.pass(t)
	f.lifecycleRun(t)
	f.sync(t)
	f.s.lifecycle.recheckReserved()
	f.lifecycleRun(t)
	want := "waiting for admission checks ghost; AdmissionCheck ghost not found"
	if got := f.get(t, "a").Status.Message; got != want {
		t.Fatalf("message = %q, want %q", got, want)
	}
	if got := eventsWith(f.takeEvents(), "Warning AdmissionCheckNotFound "+want); len(got) != 1 {
		t.Fatalf("%d AdmissionCheckNotFound events, want 1", len(got))
	}
}

// An AdmissionCheck that changes makes every Reserved unit looked at again.
func TestLifecycleAdmissionCheckChangeRechecksReservedUnits(t *testing.T) {
	f := reservedFixture(t, nil)
	f.addUnit(t, holder("h", schedv1alpha1.QueueUnitPhaseRunning))
	f.lifecycleRun(t)
	f.s.lifecycle.admissionCheckHandlers().OnAdd(&schedv1alpha1.AdmissionCheck{}, false)
	if got := f.s.lifecycle.queue.Len(); got != 1 {
		t.Fatalf("%d units to look at, want the reserved one", got)
	}
}

// The execution budget (spec.maximumExecutionTimeSeconds, from PodsReady)
// evicts the unit at its deadline on the clock, with the time banked.
func TestLifecycleExecutionBudgetEvictsAtTheDeadline(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Gates.MaximumExecutionTime = true })
	u := holder("a", schedv1alpha1.QueueUnitPhaseRunning)
	u.Spec.MaximumExecutionTimeSeconds = ptr.To[int32](60)
	queueunit.SetCondition(u, schedv1alpha1.ConditionPodsReady, metav1.ConditionTrue, "PodsReady", "", metav1.NewTime(testStart))
	f.timerSet(t, func() {
		f.addUnit(t, u)
		f.lifecycleRun(t)
	})
	f.step(t, 59*time.Second, nil)
	if f.lifecycleDue() || condition(f.get(t, "a"), schedv1alpha1.ConditionEvicted) != nil {
		t.Fatal("evicted before the budget was used up")
	}
	f.step(t, time.Second, f.lifecycleDue)
	f.lifecycleRun(t)
	got := f.get(t, "a")
	c := condition(got, schedv1alpha1.ConditionEvicted)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != schedv1alpha1.ReasonMaximumExecutionTimeExceeded {
		t.Fatalf("Evicted = %+v, want True MaximumExecutionTimeExceeded", c)
	}
	if c.Message != "Execution budget of 1m0s used up" {
		t.Errorf("message = %q", c.Message)
	}
	if ptr.Deref(got.Status.AccumulatedPastExecutionTimeSeconds, 0) != 60 {
		t.Errorf("banked %v s, want 60", got.Status.AccumulatedPastExecutionTimeSeconds)
	}
	if ev := eventsWith(f.takeEvents(), "Warning MaximumExecutionTimeExceeded"); len(ev) != 1 {
		t.Errorf("want one MaximumExecutionTimeExceeded event")
	}
}

// Without its gate, the budget is not kept.
func TestLifecycleExecutionBudgetNeedsItsGate(t *testing.T) {
	f := newFixture(t, nil)
	u := holder("a", schedv1alpha1.QueueUnitPhaseRunning)
	u.Spec.MaximumExecutionTimeSeconds = ptr.To[int32](60)
	queueunit.SetCondition(u, schedv1alpha1.ConditionPodsReady, metav1.ConditionTrue, "PodsReady", "", metav1.NewTime(testStart.Add(-time.Hour)))
	f.addUnit(t, u)
	if f.lifecycleDue() {
		t.Fatal("a budget is kept with the gate off")
	}
}

// A unit that holds quota with spec.active false is evicted (Deactivated);
// waiting, it says it is inactive (see the intake tests).
func TestLifecycleDeactivationEvicts(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Gates.QueueUnitActive = true })
	u := holder("a", schedv1alpha1.QueueUnitPhaseRunning)
	u.Spec.Active = ptr.To(false)
	f.addUnit(t, u)
	f.lifecycleRun(t)
	c := condition(f.get(t, "a"), schedv1alpha1.ConditionEvicted)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != schedv1alpha1.ReasonDeactivated || c.Message != "Deactivated: spec.active is false" {
		t.Fatalf("Evicted = %+v, want True Deactivated", c)
	}
	if ev := eventsWith(f.takeEvents(), "Warning Deactivated"); len(ev) != 1 {
		t.Errorf("want one Deactivated event")
	}
	// Seen again: no second eviction.
	f.sync(t)
	f.lifecycleRun(t)
	if f.patches != 1 {
		t.Fatalf("%d writes, want one eviction", f.patches)
	}
}

// With the requeue-state gate, a running unit's requeue state is cleared.
func TestLifecycleRunningUnitDropsItsRequeueState(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Gates.QueueUnitRequeueState = true })
	u := holder("a", schedv1alpha1.QueueUnitPhaseRunning)
	u.Status.RequeueState = &schedv1alpha1.RequeueState{Count: ptr.To[int32](3)}
	f.addUnit(t, u)
	f.lifecycleRun(t)
	if rs := f.get(t, "a").Status.RequeueState; rs != nil {
		t.Fatalf("requeueState = %+v, want cleared once the unit runs", rs)
	}
}

// With the requeue-state gate the backoff doubles with each requeue: the
// count is recorded, and the wait grows.
func TestLifecycleBackoffCountsRequeues(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Gates.QueueUnitRequeueState = true })
	if err := f.c.Create(f.ctx, &schedv1alpha1.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "prov"},
		Spec: schedv1alpha1.AdmissionCheckSpec{ControllerName: "test"}}); err != nil {
		t.Fatal(err)
	}
	f.plugin.setCapacity("team-a", 4)
	f.addQueue(t, utiltesting.MakeQueue("team-a").AdmissionCheck("prov", nil).Obj())
	u := makeUnit("a", "team-a", "1").Phase(schedv1alpha1.QueueUnitPhaseEnqueued).Obj()
	u.Status.RequeueState = &schedv1alpha1.RequeueState{Count: ptr.To[int32](2)}
	f.addUnit(t, u)
	f.pass(t)
	f.answer(t, schedv1alpha1.CheckStateRejected, "no")
	f.lifecycleRun(t)
	rs := f.get(t, "a").Status.RequeueState
	if rs == nil || ptr.Deref(rs.Count, 0) != 3 || rs.RequeueAt == nil {
		t.Fatalf("requeueState = %+v, want count 3 with a time", rs)
	}
	// The third requeue waits 4 x the base, give or take 10 %.
	wait := rs.RequeueAt.Sub(testStart)
	if lo, hi := 36*time.Second-time.Second, 44*time.Second+time.Second; wait < lo || wait > hi {
		t.Fatalf("backoff = %s, want 40s +- 10%%", wait)
	}
}

// The backoff event is recorded once per move, like the writer's events:
// a unit looked at again before its move is written (an AdmissionCheck
// changed meanwhile) is not told twice.
func TestLifecycleBackoffEventOncePerMove(t *testing.T) {
	f := reservedFixture(t, nil)
	f.answer(t, schedv1alpha1.CheckStateRetry, "no capacity")
	f.s.lifecycle.processNext(f.ctx)
	f.s.lifecycle.recheckReserved()
	f.lifecycleRun(t)
	if got := eventsWith(f.takeEvents(), "Warning AdmissionCheckRetry"); len(got) != 1 {
		t.Fatalf("%d AdmissionCheckRetry events for one move, want 1", len(got))
	}
}

// An evicted unit that nobody hands back (no job extension manages its
// kind) is requeued by the scheduler at evictionTimeout, counted from its
// Evicted condition, with a warning; before that it keeps its quota.
func TestLifecycleEvictionTimeoutRequeues(t *testing.T) {
	const timeout = 10 * time.Minute
	f := newFixture(t, func(o *Options) { o.Config.EvictionTimeout = &metav1.Duration{Duration: timeout} })
	u := holder("a", schedv1alpha1.QueueUnitPhaseRunning)
	queueunit.MarkEvicted(u, schedv1alpha1.ReasonPreempted, "Preempted to admit ns/b", metav1.NewTime(testStart))
	f.timerSet(t, func() {
		f.addUnit(t, u)
		f.lifecycleRun(t)
	})
	f.step(t, timeout-time.Second, nil)
	if f.lifecycleDue() || f.get(t, "a").Status.Phase != schedv1alpha1.QueueUnitPhaseRunning {
		t.Fatal("requeued before the eviction timeout")
	}
	f.step(t, time.Second, f.lifecycleDue)
	f.lifecycleRun(t)
	got := f.get(t, "a")
	if got.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued || len(got.Status.Admissions) != 0 {
		t.Fatalf("phase %s, admissions %v; want Enqueued with none", got.Status.Phase, got.Status.Admissions)
	}
	if c := condition(got, schedv1alpha1.ConditionQuotaReserved); c == nil || c.Status != metav1.ConditionFalse || c.Reason != schedv1alpha1.ReasonEvictionTimeout {
		t.Errorf("QuotaReserved = %+v, want False EvictionTimeout", c)
	}
	if ev := eventsWith(f.takeEvents(), "Warning EvictionTimeout"); len(ev) != 1 {
		t.Errorf("want one EvictionTimeout warning")
	}
}

// evictionTimeout 0 turns the deadline off.
func TestLifecycleEvictionTimeoutOff(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Config.EvictionTimeout = &metav1.Duration{} })
	u := holder("a", schedv1alpha1.QueueUnitPhaseRunning)
	queueunit.MarkEvicted(u, schedv1alpha1.ReasonPreempted, "Preempted to admit ns/b", metav1.NewTime(testStart.Add(-time.Hour)))
	f.addUnit(t, u)
	if f.lifecycleDue() {
		t.Fatal("an eviction deadline is kept with evictionTimeout 0")
	}
}
