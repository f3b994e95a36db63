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

package queue

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// A unit refused for want of room, with a Lack, waits until its cohort has
// given back that much room, not for any event of its cohort. Each test
// names the event that must bring it back, and one that must not.

// lackHarness has quota a (its own cohort, max 4 cpu, all used) and queue qa;
// its try refuses as the ElasticQuota plugin does, with the Lack the
// shortage says.
func lackHarness(t *testing.T, preempt bool) *harness {
	t.Helper()
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(4)})
	h.m.UpsertQueue(Settings{Name: "qa", Policy: schedv1alpha1.QueuePolicyPriority, Preempt: preempt})
	h.tree.Charge("a", cpu(4))
	return h
}

func (h *harness) tryWithLack(u *schedtypes.Unit, q Settings) *schedtypes.Failure {
	h.tries = append(h.tries, u.Name)
	if s := h.tree.Check(u.Quota, u.Request); s != nil {
		return &schedtypes.Failure{Reason: s.Reason(), Message: s.Message(),
			Recheck: &schedtypes.Recheck{Quota: u.Quota, Priority: u.Priority, Preempt: q.Preempt, Lack: &schedtypes.Lack{Resource: s.Resource, Amount: s.Missing()}}}
	}
	h.tree.Charge(u.Quota, u.Request)
	return nil
}

func (h *harness) passWithLack() []string {
	h.tries = nil
	var out []string
	for _, a := range h.m.Pass(h.tryWithLack).Admitted {
		out = append(out, a.Unit.Name)
	}
	return out
}

// give releases n cpu of quota a and tells the queues the amount.
func (h *harness) give(n int64) {
	h.tree.Release("a", cpu(n))
	h.m.FreedRoom("a", cpu(n))
}

func (h *harness) wantTried(t *testing.T, after string, want ...string) {
	t.Helper()
	if diff := cmp.Diff(want, h.tries); diff != "" {
		t.Errorf("tried after %s (-want +got):\n%s", after, diff)
	}
}

func TestLackWaitsUntilTheRoomGivenBackCoversIt(t *testing.T) {
	h := lackHarness(t, false)
	h.add("qa", "big", "a", 1, 3)
	h.passWithLack()
	h.wantTried(t, "it came", "big")

	h.give(1)
	h.passWithLack()
	h.wantTried(t, "1 of the 3 cpu it lacks was given back")
	h.give(1)
	h.passWithLack()
	h.wantTried(t, "2 of the 3 cpu it lacks were given back, one at a time")
	// The third cpu: 3 given back since its refusal, in three releases.
	h.give(1)
	if diff := cmp.Diff([]string{"big"}, h.passWithLack()); diff != "" {
		t.Errorf("admitted once 3 cpu were given back (-want +got):\n%s", diff)
	}
}

func TestLackCountsFromTheLastRefusal(t *testing.T) {
	h := lackHarness(t, false)
	h.add("qa", "big", "a", 1, 3)
	h.passWithLack()
	// 2 cpu given back, then taken again by something else (an unknown
	// event brings it back, and it is refused lacking 3 again).
	h.give(2)
	h.tree.Charge("a", cpu(2))
	h.m.Freed("a")
	h.passWithLack()
	h.wantTried(t, "room was freed in an amount not counted", "big")
	h.give(2)
	h.passWithLack()
	h.wantTried(t, "2 cpu were given back since its last refusal, which lacked 3")
}

func TestLackIsNotAnsweredByEventsThatGiveBackNoRoom(t *testing.T) {
	h := lackHarness(t, true)
	h.add("qa", "big", "a", 5, 3)
	h.add("qa", "low", "a", 1, 2)
	h.passWithLack()
	h.wantTried(t, "they came", "big", "low")

	h.m.Moved("a")
	h.passWithLack()
	h.wantTried(t, "a nomination in the cohort ended")
	// A unit of priority 5 came to hold quota a: a victim for nobody here.
	h.m.HoldingsChanged("a", 5, false)
	h.passWithLack()
	h.wantTried(t, "a unit of priority 5 came to hold quota a")
	// One of priority 3: a victim for big (priority 5, and its queue may
	// preempt), not for low (priority 1).
	h.m.HoldingsChanged("a", 3, false)
	h.passWithLack()
	h.wantTried(t, "a unit of priority 3 came to hold quota a", "big")
}

func TestLackOfAQueueThatDoesNotPreemptIgnoresNewHolders(t *testing.T) {
	h := lackHarness(t, false)
	h.add("qa", "big", "a", 5, 3)
	h.passWithLack()
	h.m.HoldingsChanged("a", 1, false)
	h.passWithLack()
	h.wantTried(t, "a unit of priority 1 came to hold quota a, in a queue that does not preempt")
	// Its queue may preempt now: the refusal was decided without that.
	h.m.UpsertQueue(Settings{Name: "qa", Policy: schedv1alpha1.QueuePolicyPriority, Preempt: true})
	h.passWithLack()
	h.wantTried(t, "its queue came to preempt", "big")
}

func TestLackIsAnsweredByAnyReleaseInItsQuotaAndByWhatCountsNoAmount(t *testing.T) {
	for _, c := range []struct {
		name  string
		event func(h *harness)
	}{
		{"a unit of its quota gave something back (it may reclaim now)", func(h *harness) { h.m.HoldingsChanged("a", 9, true) }},
		{"room was freed in an amount not counted", func(h *harness) { h.m.Freed("a") }},
		{"everything was invalidated", func(h *harness) { h.m.Invalidate() }},
		{"its priority changed", func(h *harness) {
			u, _ := h.m.Get("ns/big")
			again := *u
			again.Priority = 6
			again.Pending = schedtypes.PendingState{}
			h.m.Upsert(&again, "qa", false)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := lackHarness(t, false)
			h.add("qa", "big", "a", 5, 3)
			h.passWithLack()
			h.passWithLack()
			h.wantTried(t, "nothing happened")
			c.event(h)
			h.passWithLack()
			h.wantTried(t, c.name, "big")
		})
	}
}

func TestRefusalWithoutLackWaitsForAnyEventOfItsCohort(t *testing.T) {
	h := lackHarness(t, false)
	h.add("qa", "big", "a", 1, 3)
	h.pass() // h.try gives no Recheck
	h.m.Moved("a")
	h.pass()
	if diff := cmp.Diff([]string{"big"}, h.tries); diff != "" {
		t.Errorf("tried after a nomination ended (-want +got):\n%s", diff)
	}
}

func TestOtherCohortsRoomDoesNotCount(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(4)}, quota.Spec{Name: "b", Max: cpu(4)})
	h.m.UpsertQueue(Settings{Name: "qa", Policy: schedv1alpha1.QueuePolicyPriority})
	h.tree.Charge("a", cpu(4))
	h.add("qa", "big", "a", 1, 3)
	h.passWithLack()
	h.m.FreedRoom("b", cpu(8))
	h.passWithLack()
	h.wantTried(t, "8 cpu were given back in cohort b")
	if stats := h.m.Stats()["qa"]; stats.Active != 0 || stats.Backoff != 1 {
		t.Errorf("stats %+v, want the unit in backoff", stats)
	}
}

// A unit that holds room in its cohort learns of every event there: when it
// could no longer fit by evictions, it must give the room up.
func TestUnitHoldingRoomWaitsForAnyEventOfItsCohort(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(4)})
	h.m.UpsertQueue(Settings{Name: "qa", Policy: schedv1alpha1.QueuePolicyPriority, Preempt: true, HoldRoom: true})
	h.tree.Charge("a", cpu(4))
	h.add("qa", "big", "a", 5, 3)
	reserving := func(u *schedtypes.Unit, q Settings) *schedtypes.Failure {
		f := h.tryWithLack(u, q)
		if f != nil {
			f.Reserves = true
		}
		return f
	}
	h.m.Pass(reserving)
	if held := h.m.Held()["a"]; len(held) != 1 {
		t.Fatalf("room held in cohort a: %v, want big's", held)
	}
	h.tries = nil
	h.m.Moved("a")
	h.m.Pass(reserving)
	h.wantTried(t, "a nomination ended in the cohort where it holds room", "big")
}

// A queue whose units all wait for room in an amount is not even walked
// (its units not examined) until the room given back covers the least any
// of them still lacks: events that give back no room, and room that covers
// nobody's lack, leave it alone.
func TestQueueWaitingForRoomIsNotWalkedUntilTheRoomCoversALack(t *testing.T) {
	h := lackHarness(t, false)
	h.add("qa", "big", "a", 1, 3)
	h.add("qa", "mid", "a", 1, 2)
	pass := func(after string, wantExamined int, wantTried, wantAdmitted []string) {
		t.Helper()
		h.tries = nil
		res := h.m.Pass(h.tryWithLack)
		var admitted []string
		for _, a := range res.Admitted {
			admitted = append(admitted, a.Unit.Name)
		}
		if res.Examined != wantExamined {
			t.Errorf("after %s: %d units examined, want %d", after, res.Examined, wantExamined)
		}
		if diff := cmp.Diff(wantTried, h.tries); diff != "" {
			t.Errorf("tried after %s (-want +got):\n%s", after, diff)
		}
		if diff := cmp.Diff(wantAdmitted, admitted); diff != "" {
			t.Errorf("admitted after %s (-want +got):\n%s", after, diff)
		}
	}
	pass("they came", 2, []string{"big", "mid"}, nil)
	// big lacks 3 cpu, mid 2.
	h.give(1)
	pass("1 cpu was given back", 0, nil, nil)
	h.m.Moved("a")
	pass("a nomination ended", 0, nil, nil)
	h.m.FreedRoom("b", cpu(8))
	pass("8 cpu were given back in another cohort", 0, nil, nil)
	// 2 given back since their refusals: mid's lack, not big's (the queue is
	// walked; big is examined, not tried).
	h.give(1)
	pass("2 cpu were given back", 2, []string{"mid"}, []string{"mid"})
	// big still lacks 1 of its 3 (2 were given back, which mid took).
	h.m.Moved("a")
	pass("a nomination ended", 0, nil, nil)
	h.give(1)
	pass("3 cpu were given back since big's refusal", 1, []string{"big"}, nil)
	// Refused again lacking 2 (1 cpu free): 1 more is not enough.
	h.give(1)
	pass("1 cpu was given back since big's last refusal", 0, nil, nil)
	h.give(1)
	pass("2 cpu were given back since big's last refusal", 1, []string{"big"}, []string{"big"})
}

// A queue with a unit refused without a Lack is walked on any event of its
// cohort, even if its other units wait for room.
func TestQueueWithARefusalWithoutLackIsWalkedOnAnyEvent(t *testing.T) {
	h := lackHarness(t, false)
	h.add("qa", "big", "a", 1, 3)
	h.add("qa", "odd", "a", 1, 2)
	try := func(u *schedtypes.Unit, q Settings) *schedtypes.Failure {
		if u.Name == "odd" {
			return h.try(u, q)
		}
		return h.tryWithLack(u, q)
	}
	h.m.Pass(try)
	h.m.Moved("a")
	if res := h.m.Pass(try); res.Examined != 2 {
		t.Errorf("after a nomination ended: %d units examined, want both", res.Examined)
	}
}

// A lack at the cohort's top counts what admissions took there since: room
// given back and taken at once by a unit ahead answers nobody else.
func TestRootLackCountsRoomTakenByAdmissions(t *testing.T) {
	h := lackHarness(t, false)
	h.add("qa", "x", "a", 2, 2)
	h.add("qa", "y", "a", 1, 2)
	atRoot := func(u *schedtypes.Unit, q Settings) *schedtypes.Failure {
		f := h.tryWithLack(u, q)
		if f != nil && f.Recheck != nil && f.Recheck.Lack != nil {
			f.Recheck.Lack.Root = true
		}
		return f
	}
	pass := func(after string, wantTried, wantAdmitted []string) {
		t.Helper()
		h.tries = nil
		var admitted []string
		for _, a := range h.m.Pass(atRoot).Admitted {
			admitted = append(admitted, a.Unit.Name)
		}
		if diff := cmp.Diff(wantTried, h.tries); diff != "" {
			t.Errorf("tried after %s (-want +got):\n%s", after, diff)
		}
		if diff := cmp.Diff(wantAdmitted, admitted); diff != "" {
			t.Errorf("admitted after %s (-want +got):\n%s", after, diff)
		}
	}
	pass("they came", []string{"x", "y"}, nil)
	// Both lack 2. 2 given back: x takes them in the same pass, and y, which
	// lacked as much, is not tried.
	h.give(2)
	pass("2 cpu were given back", []string{"x"}, []string{"x"})
	h.give(1)
	pass("1 more cpu was given back", nil, nil)
	h.give(1)
	pass("2 cpu were given back since x took the first 2", []string{"y"}, []string{"y"})
	// Settled with nothing waiting: one more pass tries nobody.
	pass("nothing happened", nil, nil)
}

// A queue found worth a walk when the pass started is not walked once the
// pass's own admissions took the room its units wait for.
func TestQueueIsSkippedOnceThePassTookTheRoomItWaitsFor(t *testing.T) {
	h := lackHarness(t, false)
	h.m.UpsertQueue(Settings{Name: "qb", Policy: schedv1alpha1.QueuePolicyPriority})
	h.add("qa", "x", "a", 1, 2)
	h.add("qb", "y", "a", 1, 2)
	atRoot := func(u *schedtypes.Unit, q Settings) *schedtypes.Failure {
		f := h.tryWithLack(u, q)
		if f != nil && f.Recheck != nil && f.Recheck.Lack != nil {
			f.Recheck.Lack.Root = true
		}
		return f
	}
	h.m.Pass(atRoot)
	// Both lack 2 at the top of cohort a; 2 are given back, and whichever
	// queue goes first takes them: the other is not even walked.
	h.give(2)
	h.tries = nil
	res := h.m.Pass(atRoot)
	if len(res.Admitted) != 1 || len(h.tries) != 1 || res.Examined != 1 {
		t.Errorf("admitted %d, tried %v, examined %d; want one unit admitted, tried and examined", len(res.Admitted), h.tries, res.Examined)
	}
	// The skipped queue kept its settling: 2 more given back bring it in.
	h.give(2)
	h.tries = nil
	res = h.m.Pass(atRoot)
	if len(res.Admitted) != 1 || len(h.tries) != 1 {
		t.Errorf("admitted %d, tried %v after 2 more cpu; want the other unit", len(res.Admitted), h.tries)
	}
}
