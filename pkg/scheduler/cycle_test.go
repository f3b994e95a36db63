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
	"fmt"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// failAdmissions makes every admission write conflict (another writer came
// first) until the returned function is called.
func (f *fixture) failAdmissions() (stop func()) {
	f.failPatches(func(obj client.Object) error {
		if u, ok := obj.(*schedv1alpha1.QueueUnit); ok && u.Status.Phase == schedv1alpha1.QueueUnitPhaseDequeued {
			return apierrors.NewConflict(schema.GroupResource{Group: schedv1alpha1.GroupVersion.Group, Resource: "queueunits"},
				u.Name, fmt.Errorf("injected"))
		}
		return nil
	})
	return func() { f.failPatches(nil) }
}

// An admission is written as docs/protocol.md says: phase Dequeued, the
// admissions per pod set, the quota, the time, conditions QuotaReserved and
// Admitted True; and the Scheduled event names the queue, quota and charge.
func TestPassAdmitsAFittingUnit(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 4)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	f.addUnit(t, utiltesting.MakeQueueUnit("a", "ns").Quota("team-a").PodSet("worker", 2, "cpu", "1").Obj())
	f.pass(t)

	u := f.get(t, "a")
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseDequeued || u.Status.Quota != "team-a" {
		t.Fatalf("status = %+v, want Dequeued charged to team-a", u.Status)
	}
	if len(u.Status.Admissions) != 1 || u.Status.Admissions[0].Name != "worker" || u.Status.Admissions[0].Replicas != 2 ||
		u.Status.Admissions[0].Resources.Cpu().MilliValue() != 1000 {
		t.Errorf("admissions = %+v, want 2 workers of 1 CPU", u.Status.Admissions)
	}
	if u.Status.LastAllocateTime == nil || !u.Status.LastAllocateTime.Time.Equal(testStart) {
		t.Errorf("lastAllocateTime = %v, want the clock's time", u.Status.LastAllocateTime)
	}
	for _, ct := range []string{schedv1alpha1.ConditionQuotaReserved, schedv1alpha1.ConditionAdmitted} {
		if c := condition(u, ct); c == nil || c.Status != metav1.ConditionTrue {
			t.Errorf("%s = %+v, want True", ct, c)
		}
	}
	if u.Status.Attempts != 1 {
		t.Errorf("attempts = %d, want 1", u.Status.Attempts)
	}
	want := "Normal Scheduled Admitted by queue team-a; quota team-a charged cpu=2; node fit check skipped (--node-fit-check=false)"
	if got := eventsWith(f.takeEvents(), want); len(got) != 1 {
		t.Errorf("want one event %q", want)
	}
	if h, ok := f.plugin.chargedTo("ns/a"); !ok || h.Used["cpu"] != 2000 {
		t.Errorf("charged %+v, want 2 CPUs", h)
	}
	if f.pendingIn("team-a", "ns/a") {
		t.Error("the admitted unit still waits")
	}
}

// Never admit twice while a write is in flight: passes that run before the
// admission is written, and stale updates of the unit, admit nothing more.
func TestPassNeverAdmitsTwiceWhileAWriteIsInFlight(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 4)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	pending := f.addUnit(t, makeUnit("a", "team-a", "1").Obj())

	f.s.pass.schedule(f.ctx)
	// The informer brings the unit again, still pending, before the write.
	f.s.intake.onUnit(pending.DeepCopy())
	f.s.intake.resyncAll()
	f.s.env.queues.Invalidate()
	f.s.pass.schedule(f.ctx)
	f.s.pass.schedule(f.ctx)
	if f.pendingIn("team-a", "ns/a") {
		t.Fatal("a unit being admitted is back in its queue")
	}
	if _, inflight := f.s.cache.object("ns/a"); !inflight {
		t.Fatal("the admission is not in flight")
	}
	f.drain(t)
	if r, _, _ := f.plugin.counts(); r != 1 {
		t.Fatalf("%d reservations, want 1", r)
	}
	if f.patches != 1 {
		t.Fatalf("%d writes, want one admission", f.patches)
	}
	if got := eventsWith(f.takeEvents(), "Scheduled"); len(got) != 1 {
		t.Fatalf("%d Scheduled events, want 1", len(got))
	}
	// Seen back admitted, it is charged what the object says, once.
	f.feed(t, "a")
	f.pass(t)
	if r, _, _ := f.plugin.counts(); r != 1 {
		t.Fatalf("%d reservations after the write landed, want 1", r)
	}
	if h, _ := f.plugin.chargedTo("ns/a"); h.Used["cpu"] != 1000 {
		t.Fatalf("charged %+v, want 1 CPU", h)
	}
}

// Units are admitted while they fit, and the first that does not fit says
// how much is missing.
func TestPassAdmitsUpToTheCapacity(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 3)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	for i, name := range []string{"a", "b", "c"} {
		f.addUnit(t, makeUnit(name, "team-a", "1").Priority(int32(10-i)).Obj())
	}
	f.addUnit(t, makeUnit("d", "team-a", "2").Priority(1).Obj())
	f.pass(t)
	for _, name := range []string{"a", "b", "c"} {
		if got := f.get(t, name).Status.Phase; got != schedv1alpha1.QueueUnitPhaseDequeued {
			t.Errorf("%s: phase = %s, want Dequeued", name, got)
		}
	}
	f.step(t, waitingWriteDelay, f.informDue)
	wantWaiting(t, f.get(t, "d"), "InsufficientQuota", "insufficient quota: quota team-a has 0 cpu free")
	if got := eventsWith(f.takeEvents(), "Warning FailedScheduling insufficient quota"); len(got) != 1 {
		t.Errorf("want one FailedScheduling event for d, got %v", got)
	}

	// A holder finishes: room is freed and d is admitted.
	f.extension(t, "a", func(u *schedv1alpha1.QueueUnit) { u.Status.Phase = schedv1alpha1.QueueUnitPhaseSucceed })
	f.extension(t, "b", func(u *schedv1alpha1.QueueUnit) { u.Status.Phase = schedv1alpha1.QueueUnitPhaseSucceed })
	f.pass(t)
	if got := f.get(t, "d").Status.Phase; got != schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatalf("d: phase = %s, want admitted once room was freed", got)
	}
	if c := condition(f.get(t, "d"), schedv1alpha1.ConditionQuotaReserved); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("d: QuotaReserved = %+v, want True", c)
	}
}

// A failed admission write gives the quota back and the unit is decided
// again; it is admitted once the API takes the write.
func TestPassFailedAdmissionWriteGivesQuotaBackAndDecidesAgain(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 1)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	f.addUnit(t, makeUnit("a", "team-a", "1").Obj())
	stop := f.failAdmissions()
	f.pass(t)

	if _, ok := f.plugin.chargedTo("ns/a"); ok {
		t.Fatal("the quota of a failed admission was not given back")
	}
	if _, un, _ := f.plugin.counts(); un != 1 {
		t.Fatalf("%d unreserves, want 1", un)
	}
	if got := f.get(t, "a").Status.Phase; got == schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatal("the failed admission reached the API")
	}
	if !f.pendingIn("team-a", "ns/a") {
		t.Fatal("the unit is not back in its queue")
	}
	if _, inflight := f.s.cache.object("ns/a"); inflight {
		t.Fatal("the failed admission is still in flight")
	}
	if got := eventsWith(f.takeEvents(), "Scheduled"); len(got) != 0 {
		t.Fatalf("a failed admission recorded %v", got)
	}

	stop()
	f.pass(t)
	if got := f.get(t, "a").Status.Phase; got != schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatalf("phase = %s, want admitted on the second decision", got)
	}
	if r, _, _ := f.plugin.counts(); r != 2 {
		t.Fatalf("%d reservations, want 2", r)
	}
}

// An admission on a stale object (someone wrote the unit since) is not
// retried blindly: it conflicts, and the unit is decided again on the
// fresh object.
func TestPassAdmissionConflictDecidesAgain(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 1)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	f.addUnit(t, makeUnit("a", "team-a", "1").Obj())
	f.s.pass.schedule(f.ctx)
	// The extension writes the unit before the admission lands.
	other := f.get(t, "a")
	other.Status.Message = "from the extension"
	if err := f.c.Status().Update(f.ctx, other); err != nil {
		t.Fatal(err)
	}
	f.drain(t)
	if got := f.get(t, "a"); got.Status.Phase == schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatal("an admission on a stale object overwrote a newer one")
	}
	if _, ok := f.plugin.chargedTo("ns/a"); ok {
		t.Fatal("the conflicting admission kept its quota")
	}
	f.feed(t, "a")
	f.pass(t)
	if got := f.get(t, "a"); got.Status.Phase != schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatalf("phase = %s, want admitted on the fresh object", got.Status.Phase)
	}
}

// A unit whose queue requires admission checks is admitted as Reserved:
// quota held, every check Pending, Admitted=False until they are Ready.
func TestPassAdmissionChecksPutTheUnitInReserved(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 4)
	f.addQueue(t, utiltesting.MakeQueue("team-a").AdmissionCheck("prov", nil).
		AdmissionCheck("gpu-only", map[string]string{"gpu": "true"}).AdmissionCheck("budget", nil).Obj())
	f.addUnit(t, makeUnit("a", "team-a", "1").Obj())
	f.pass(t)

	u := f.get(t, "a")
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseReserved {
		t.Fatalf("phase = %s, want Reserved", u.Status.Phase)
	}
	var names []string
	for _, c := range u.Status.AdmissionChecks {
		names = append(names, c.Name)
		if c.State != schedv1alpha1.CheckStatePending {
			t.Errorf("check %s = %s, want Pending", c.Name, c.State)
		}
	}
	if fmt.Sprint(names) != "[prov budget]" {
		t.Errorf("checks = %v, want those whose selector matches: prov, budget", names)
	}
	if u.Status.Message != "waiting for admission checks prov, budget" {
		t.Errorf("message = %q", u.Status.Message)
	}
	if c := condition(u, schedv1alpha1.ConditionAdmitted); c == nil || c.Status != metav1.ConditionFalse || c.Reason != "AdmissionChecksPending" {
		t.Errorf("Admitted = %+v, want False AdmissionChecksPending", c)
	}
	if c := condition(u, schedv1alpha1.ConditionQuotaReserved); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("QuotaReserved = %+v, want True", c)
	}
	if h, ok := f.plugin.chargedTo("ns/a"); !ok || h.Used["cpu"] != 1000 {
		t.Errorf("a reserved unit is charged %+v, want its CPU", h)
	}
}

// A unit admitted again after an eviction has its Evicted condition turned
// False, and keeps its requeue count.
func TestPassAdmittedAgainClearsEvicted(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 4)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	u := makeUnit("a", "team-a", "1").Phase(schedv1alpha1.QueueUnitPhaseEnqueued).Obj()
	queueunit.SetCondition(u, schedv1alpha1.ConditionEvicted, metav1.ConditionTrue, schedv1alpha1.ReasonPreempted, "to admit ns/p", metav1.NewTime(testStart))
	count := int32(2)
	u.Status.RequeueState = &schedv1alpha1.RequeueState{Count: &count, RequeueAt: &metav1.Time{Time: testStart}}
	f.addUnit(t, u)
	f.pass(t)
	got := f.get(t, "a")
	if c := condition(got, schedv1alpha1.ConditionEvicted); c == nil || c.Status != metav1.ConditionFalse {
		t.Fatalf("Evicted = %+v, want False after admission", c)
	}
	if rs := got.Status.RequeueState; rs == nil || rs.Count == nil || *rs.Count != 2 || rs.RequeueAt != nil {
		t.Fatalf("requeueState = %+v, want the count kept and the time dropped", rs)
	}
}

// A unit that can never fit says so, and is not tried again in later passes
// while nothing changes.
func TestPassNeverFitsIsReportedOnce(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 2)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	f.addUnit(t, makeUnit("big", "team-a", "3").Obj())
	f.pass(t)
	f.step(t, waitingWriteDelay, f.informDue)
	wantWaiting(t, f.get(t, "big"), "NeverFits", "can never fit: quota team-a allows at most 2000 cpu")
	patches := f.patches
	f.s.env.queues.Invalidate()
	f.pass(t)
	f.step(t, waitingWriteDelay, nil)
	if f.patches != patches {
		t.Fatalf("the same reason was written again (%d writes)", f.patches-patches)
	}
	if got := f.get(t, "big").Status.Attempts; got != 1 {
		t.Fatalf("attempts = %d, want 1: a repeated refusal is not written", got)
	}
}

// Units of a quota admitted out of order are never mixed between queues:
// a Block queue holds later units behind its head, which says what it waits
// for, and they name the unit directly ahead.
func TestPassBlockQueueHoldsLaterUnits(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 2)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Policy(schedv1alpha1.QueuePolicyBlock).Obj())
	f.addUnit(t, makeUnit("head", "team-a", "2").Priority(10).Obj())
	f.addUnit(t, makeUnit("holder", "team-a", "1").Phase(schedv1alpha1.QueueUnitPhaseRunning).Obj())
	f.addUnit(t, makeUnit("small", "team-a", "1").Priority(5).Obj())
	f.pass(t)
	f.step(t, waitingWriteDelay, f.informDue)
	if got := f.get(t, "small").Status.Phase; got == schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatal("a later unit jumped the blocked head of a Block queue")
	}
	wantWaiting(t, f.get(t, "head"), "InsufficientQuota", "insufficient quota")
	wantWaiting(t, f.get(t, "small"), "WaitingInLine", "waiting behind ns/head")
	if got := f.get(t, "small").Status.Attempts; got != 0 {
		t.Errorf("a held-back unit counted %d attempts, want 0", got)
	}
	if got := eventsWith(f.takeEvents(), "FailedScheduling", "waiting behind"); len(got) != 0 {
		t.Errorf("a held-back unit recorded %v", got)
	}
}

// A unit refused on the strength of another's refusal in the same pass is
// told with its own numbers when its wait is written.
func TestPassInferredRefusalIsToldWithItsOwnNumbers(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 4)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	f.addUnit(t, makeUnit("h", "team-a", "3").Phase(schedv1alpha1.QueueUnitPhaseRunning).Obj())
	f.addUnit(t, makeUnit("a", "team-a", "2").Priority(10).Obj())
	f.addUnit(t, makeUnit("b", "team-a", "3").Priority(5).Obj())
	f.pass(t)
	f.step(t, waitingWriteDelay, f.informDue)
	wantWaiting(t, f.get(t, "a"), "InsufficientQuota", "insufficient quota: quota team-a has 1000 cpu free, the unit requests 2000")
	wantWaiting(t, f.get(t, "b"), "InsufficientQuota", "insufficient quota: quota team-a has 1000 cpu free, the unit requests 3000")
}

// A queue's koord-queue/max-wait is a deadline: a refused unit is looked at
// again when it is reached, and then reserves its quota: later units of the
// quota wait for it (QuotaReservedByMaxWait).
func TestPassMaxWaitWakesAndReserves(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 1)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Annotation(schedv1alpha1.MaxWaitAnnotation, "30m").Obj())
	f.addUnit(t, makeUnit("h", "team-a", "1").Phase(schedv1alpha1.QueueUnitPhaseRunning).Obj())
	f.addUnit(t, makeUnit("a", "team-a", "1").Priority(10).Created(testStart).Obj())
	f.addUnit(t, makeUnit("b", "team-a", "1").Priority(5).Created(testStart).Obj())
	f.timerSet(t, func() { f.pass(t) })
	deadline := testStart.Add(30 * time.Minute)
	if at, ok := f.s.wakeups.pending("team-a"); !ok || !at.Equal(deadline) {
		t.Fatalf("wakeup = %v %v, want at the end of a's max-wait %v", at, ok, deadline)
	}
	for len(f.s.env.queues.Kicked()) > 0 {
		<-f.s.env.queues.Kicked()
	}
	f.step(t, 30*time.Minute, func() bool { return len(f.s.env.queues.Kicked()) > 0 })
	f.pass(t)
	f.step(t, waitingWriteDelay, f.informDue)
	wantWaiting(t, f.get(t, "a"), "InsufficientQuota", "insufficient quota: quota team-a has 0 cpu free, the unit requests 1000; reserving: later units of quota team-a wait until it is admitted")
	// b already said why it waited: its hold is written if it lasts.
	f.step(t, heldBackRewriteDelay-waitingWriteDelay, f.informDue)
	wantWaiting(t, f.get(t, "b"), "QuotaReservedByMaxWait", "held back: ns/a has waited longer than koord-queue/max-wait")
}

// A list served from a watch cache behind the API (after a watch broke) can
// bring back a unit as it was before its admission. The scheduler keeps what
// it has seen: the unit stays charged and is not queued again, so the room
// is not given to another unit while the first one runs (a quota exceeded
// in a perf run). A newer version is taken as usual.
func TestOlderVersionOfAUnitIsIgnored(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 2)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	before := f.addUnit(t, makeUnit("a", "team-a", "2").Obj())
	f.pass(t)
	if u := f.get(t, "a"); u.Status.Phase != schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatalf("a is %s, want Dequeued", u.Status.Phase)
	}
	f.addUnit(t, makeUnit("b", "team-a", "2").Obj())
	f.pass(t)

	// The relist hands back a as it was before its admission.
	f.s.intake.onUnit(before.DeepCopy())
	if h, ok := f.plugin.chargedTo("ns/a"); !ok || h.Used["cpu"] != 2000 {
		t.Fatalf("a charged %+v after an older version of it: want its 2 CPUs", h)
	}
	if f.pendingIn("team-a", "ns/a") {
		t.Fatal("an older version put the admitted unit back in its queue")
	}
	f.pass(t)
	if u := f.get(t, "b"); u.Status.Phase == schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatal("b was admitted into the room a still holds")
	}

	// The unit's own newer versions still count: it finishes, b goes in.
	f.extension(t, "a", func(u *schedv1alpha1.QueueUnit) { u.Status.Phase = schedv1alpha1.QueueUnitPhaseSucceed })
	if _, ok := f.plugin.chargedTo("ns/a"); ok {
		t.Fatal("a finished and is still charged")
	}
	f.pass(t)
	if u := f.get(t, "b"); u.Status.Phase != schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatalf("b is %s once a finished, want Dequeued", u.Status.Phase)
	}
}

// With an admission window, a pass admits no more units than may be in
// flight; the room left goes, once writes land, to the units of highest
// priority by then, a later one of higher priority among them.
func TestPassAdmitsNoMoreThanTheWindow(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.AdmissionWindow = 2 })
	f.plugin.setCapacity("team-a", 10)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	names := []string{"a", "b", "c", "d", "h"}
	for i, name := range names[:4] {
		f.addUnit(t, makeUnit(name, "team-a", "1").Priority(int32(10-i)).Obj())
	}
	inFlight := func() []string {
		var out []string
		for _, name := range names {
			if _, in := f.s.cache.object(schedtypes.UnitKey("ns/" + name)); in {
				out = append(out, name)
			}
		}
		return out
	}
	f.s.pass.schedule(f.ctx)
	f.s.pass.schedule(f.ctx) // nothing landed: the window is full
	if got := inFlight(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("in flight: %v, want a and b", got)
	}
	f.addUnit(t, makeUnit("h", "team-a", "1").Priority(100).Obj())
	for len(f.s.env.queues.Kicked()) > 0 {
		<-f.s.env.queues.Kicked()
	}
	f.drain(t) // a and b land
	select {
	case <-f.s.env.queues.Kicked():
	default:
		t.Fatal("no pass asked for once the window had room")
	}
	f.s.pass.schedule(f.ctx)
	if got := inFlight(); !slices.Equal(got, []string{"c", "h"}) {
		t.Fatalf("in flight: %v, want h and c", got)
	}
	f.drain(t)
	f.s.pass.schedule(f.ctx)
	if got := inFlight(); !slices.Equal(got, []string{"d"}) {
		t.Fatalf("in flight: %v, want d", got)
	}
}
