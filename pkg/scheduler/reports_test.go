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
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

var (
	shortA = &schedtypes.Failure{Reason: schedtypes.Reason{Kind: schedtypes.WaitInsufficientQuota, Subject: "team-a", Detail: "cpu"}, Message: "insufficient quota: quota team-a has 1 cpu free"}
	// shortAMoved is the same wait with other numbers.
	shortAMoved = &schedtypes.Failure{Reason: schedtypes.Reason{Kind: schedtypes.WaitInsufficientQuota, Subject: "team-a", Detail: "cpu"}, Message: "insufficient quota: quota team-a has 0 cpu free"}
	behindX     = &schedtypes.Failure{Reason: schedtypes.Reason{Kind: schedtypes.WaitBehind, Subject: "ns/x"}, HeldBack: true, Message: "waiting behind ns/x, the unit directly ahead of it"}
	neverA      = &schedtypes.Failure{Reason: schedtypes.Reason{Kind: schedtypes.WaitNeverFits, Subject: "team-a", Detail: "cpu"}, NeverFits: true, Message: "can never fit: quota team-a allows at most 2 cpu"}
)

// reporterFixture has unit a waiting in queue team-a, already Enqueued.
func reporterFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, nil)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	f.addUnit(t, makeUnit("a", "team-a", "2").Phase(schedv1alpha1.QueueUnitPhaseEnqueued).Obj())
	return f
}

// report tells the reporter that a waits for fl, on the object the scheduler
// last saw.
func (f *fixture) report(t *testing.T, fl *schedtypes.Failure) {
	t.Helper()
	u, _ := f.s.cache.object("ns/a")
	if u == nil {
		t.Fatal("ns/a is unknown")
	}
	f.s.reports.reportWaiting(u, fl)
}

// A reason is written once, about a second after it was decided, with an
// attempt and a FailedScheduling event; the same reason again, even with
// other numbers, costs no write (docs/protocol.md: writes follow the reason).
func TestReporterWritesAReasonOnce(t *testing.T) {
	f := reporterFixture(t)
	f.report(t, shortA)
	f.step(t, waitingWriteDelay-time.Millisecond, nil)
	if f.patches != 0 {
		t.Fatal("the report was written before waitingWriteDelay")
	}
	f.step(t, time.Millisecond, f.informDue)
	u := f.get(t, "a")
	wantWaiting(t, u, "InsufficientQuota", shortA.Message)
	if u.Status.Attempts != 1 {
		t.Errorf("attempts = %d, want 1", u.Status.Attempts)
	}
	// The condition dates from the unit's creation: it never held quota.
	if c := condition(u, schedv1alpha1.ConditionQuotaReserved); !c.LastTransitionTime.Time.Equal(u.CreationTimestamp.Time) {
		t.Errorf("QuotaReserved dates from %v, want the creation %v", c.LastTransitionTime, u.CreationTimestamp)
	}
	if got := eventsWith(f.takeEvents(), "Warning FailedScheduling "+shortA.Message); len(got) != 1 {
		t.Errorf("want one FailedScheduling event")
	}

	f.report(t, shortA)
	f.report(t, shortAMoved)
	f.step(t, heldBackRewriteDelay, nil)
	if f.patches != 1 {
		t.Fatalf("%d writes, want 1: a repeated reason costs nothing", f.patches)
	}
	if got := f.takeEvents(); len(got) != 0 {
		t.Fatalf("a repeated reason recorded %v", got)
	}
	if got := f.get(t, "a").Status.Message; got != shortA.Message {
		t.Fatalf("message = %q, want the text of the moment it was written", got)
	}
}

// A new reason is written, and the condition that was already False keeps
// its time.
func TestReporterNewReasonIsWrittenAndKeepsTheWaitsStart(t *testing.T) {
	f := reporterFixture(t)
	f.report(t, shortA)
	f.step(t, waitingWriteDelay, f.informDue)
	first := condition(f.get(t, "a"), schedv1alpha1.ConditionQuotaReserved).LastTransitionTime

	f.clk.Step(time.Hour)
	f.report(t, neverA)
	f.step(t, waitingWriteDelay, f.informDue)
	u := f.get(t, "a")
	wantWaiting(t, u, "NeverFits", neverA.Message)
	if c := condition(u, schedv1alpha1.ConditionQuotaReserved); !c.LastTransitionTime.Equal(&first) {
		t.Errorf("QuotaReserved moved from %v to %v, want the wait's start kept", first, c.LastTransitionTime)
	}
	if u.Status.Attempts != 2 || f.patches != 2 {
		t.Errorf("attempts = %d, writes = %d; want 2 and 2", u.Status.Attempts, f.patches)
	}
}

// A report not yet written is replaced by a later one: one write, the later
// text.
func TestReporterLaterReportReplacesOneNotWritten(t *testing.T) {
	f := reporterFixture(t)
	f.report(t, shortA)
	f.report(t, neverA)
	f.step(t, waitingWriteDelay, f.informDue)
	wantWaiting(t, f.get(t, "a"), "NeverFits", neverA.Message)
	if f.patches != 1 {
		t.Fatalf("%d writes, want the later report alone", f.patches)
	}
	if got := eventsWith(f.takeEvents(), "FailedScheduling"); len(got) != 1 {
		t.Fatalf("events = %v, want the later report's alone", got)
	}
}

// A reason that comes back before the report of the one in between was
// written costs nothing: that report is dropped.
func TestReporterReasonBackBeforeItsReportCostsNothing(t *testing.T) {
	f := reporterFixture(t)
	f.report(t, shortA)
	f.step(t, waitingWriteDelay, f.informDue)
	f.takeEvents()

	f.report(t, neverA)
	f.report(t, shortA)
	f.step(t, heldBackRewriteDelay, nil)
	if f.patches != 1 {
		t.Fatalf("%d writes, want none after the first", f.patches-1)
	}
	if got := f.takeEvents(); len(got) != 0 {
		t.Fatalf("events %v for a reason the unit already shows", got)
	}
	wantWaiting(t, f.get(t, "a"), "InsufficientQuota", shortA.Message)
}

// A unit that already says why it waits and is then held back is rewritten
// only if the hold lasts heldBackRewriteDelay; a hold that ends before
// costs no write. A held-back unit counts no attempt and records no event.
func TestReporterHeldBackRewriteWaits(t *testing.T) {
	f := reporterFixture(t)
	f.report(t, shortA)
	f.step(t, waitingWriteDelay, f.informDue)
	f.takeEvents()

	// A short hold.
	f.report(t, behindX)
	f.step(t, heldBackRewriteDelay-time.Second, nil)
	f.report(t, shortA)
	f.step(t, time.Minute, nil)
	if f.patches != 1 {
		t.Fatalf("a hold that ended before %s was written", heldBackRewriteDelay)
	}

	// A long one.
	f.report(t, behindX)
	f.step(t, waitingWriteDelay, nil)
	if f.patches != 1 {
		t.Fatalf("a held-back unit that says why it waits was rewritten after %s", waitingWriteDelay)
	}
	f.step(t, heldBackRewriteDelay-waitingWriteDelay, f.informDue)
	u := f.get(t, "a")
	wantWaiting(t, u, "WaitingInLine", behindX.Message)
	if u.Status.Attempts != 1 {
		t.Errorf("attempts = %d, want the one refusal only", u.Status.Attempts)
	}
	if got := f.takeEvents(); len(got) != 0 {
		t.Errorf("a held-back unit recorded %v", got)
	}
}

// A held-back unit that says nothing yet is told at the usual delay.
func TestReporterHeldBackNewUnitIsToldSoon(t *testing.T) {
	f := reporterFixture(t)
	f.report(t, behindX)
	f.step(t, waitingWriteDelay, f.informDue)
	wantWaiting(t, f.get(t, "a"), "WaitingInLine", behindX.Message)
}

// A reason that changes while its report is being written is written next.
func TestReporterReasonChangedDuringTheWriteIsWrittenNext(t *testing.T) {
	f := reporterFixture(t)
	once := false
	f.failPatches(func(client.Object) error {
		if !once {
			once = true
			f.report(t, neverA)
		}
		return nil
	})
	f.report(t, shortA)
	f.step(t, waitingWriteDelay, f.informDue)
	wantWaiting(t, f.get(t, "a"), "InsufficientQuota", shortA.Message)
	f.step(t, waitingWriteDelay, f.informDue)
	wantWaiting(t, f.get(t, "a"), "NeverFits", neverA.Message)
}

// Stale entries, unknown units and units being admitted are not reported.
func TestReporterIgnoresWhatIsNotWaiting(t *testing.T) {
	f := reporterFixture(t)
	u, _ := f.s.cache.object("ns/a")
	f.s.reports.reportWaiting(u, &schedtypes.Failure{Stale: true, HeldBack: true})
	f.s.reports.reportWaiting(makeUnit("unknown", "team-a", "1").Obj(), shortA)
	f.s.cache.update("ns/a", func(st *unitState) { st.inflight = true })
	f.s.reports.reportWaiting(u, shortA)
	f.step(t, heldBackRewriteDelay, nil)
	if f.patches != 0 || f.w.has("ns/a") {
		t.Fatalf("%d writes for units that do not wait", f.patches)
	}
}

// An eviction is written only on a unit that holds quota and is not evicted
// yet: Evicted=True with the reason, every admission's reclaim state, and
// one event. With the execution budget gate, the run so far is banked.
func TestReporterEvictOnce(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Gates.MaximumExecutionTime = true })
	h := holder("h", schedv1alpha1.QueueUnitPhaseRunning)
	queueunit.SetCondition(h, schedv1alpha1.ConditionPodsReady, metav1.ConditionTrue, "PodsReady", "", metav1.NewTime(testStart.Add(-90*time.Second)))
	h.Status.AccumulatedPastExecutionTimeSeconds = ptr.To[int32](30)
	f.addUnit(t, h)
	w := f.addUnit(t, makeUnit("w", "team-a", "1").Phase(schedv1alpha1.QueueUnitPhaseEnqueued).Obj())
	held, _ := f.s.cache.object("ns/h")

	f.s.reports.evict(held, schedv1alpha1.ReasonPreempted, "to admit ns/p")
	f.s.reports.evict(held, schedv1alpha1.ReasonPreempted, "to admit ns/p")
	f.s.reports.evict(w, schedv1alpha1.ReasonPreempted, "to admit ns/p")
	f.drain(t)
	got := f.get(t, "h")
	c := condition(got, schedv1alpha1.ConditionEvicted)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != schedv1alpha1.ReasonPreempted || c.Message != "to admit ns/p" {
		t.Fatalf("Evicted = %+v", c)
	}
	if rs := got.Status.Admissions[0].ReclaimState; rs == nil || rs.Replicas != 3 {
		t.Errorf("reclaim state = %+v, want all 3 replicas", rs)
	}
	if got := ptr.Deref(got.Status.AccumulatedPastExecutionTimeSeconds, 0); got != 120 {
		t.Errorf("banked execution time = %ds, want 30 banked + 90 of this run", got)
	}
	if f.patches != 1 {
		t.Errorf("%d writes, want the eviction once", f.patches)
	}
	if got := eventsWith(f.takeEvents(), "Warning Preempted to admit ns/p"); len(got) != 1 {
		t.Errorf("want one Preempted event")
	}
	if condition(f.get(t, "w"), schedv1alpha1.ConditionEvicted) != nil {
		t.Error("a waiting unit was evicted")
	}
	// Evicted already: nothing more.
	f.s.reports.evict(got, schedv1alpha1.ReasonDeactivated, "again")
	f.drain(t)
	if f.patches != 1 {
		t.Error("an evicted unit was evicted again")
	}
}
