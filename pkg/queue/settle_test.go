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
	"time"

	"github.com/google/go-cmp/cmp"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// Each rule that lets a pass skip a queue, with the event that must make it
// walk the queue again. A skip that is too eager leaves a unit untried that
// could now fit, or that must say something new: each test fails then.

// twoFullQueues has quotas a and b (cohorts of their own), each full, and a
// queue per quota with two units that were refused once.
func twoFullQueues(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(4)}, quota.Spec{Name: "b", Max: cpu(4)})
	for _, name := range []schedtypes.QueueName{"qa", "qb"} {
		h.m.UpsertQueue(Settings{Name: name, Policy: schedv1alpha1.QueuePolicyPriority})
	}
	h.tree.Charge("a", cpu(4))
	h.tree.Charge("b", cpu(4))
	h.add("qa", "a1", "a", 2, 2)
	h.add("qa", "a2", "a", 1, 1)
	h.add("qb", "b1", "b", 2, 2)
	h.add("qb", "b2", "b", 1, 1)
	if got := h.pass(); len(got) != 0 {
		t.Fatalf("admitted %v into full quotas", got)
	}
	if len(h.tries) != 4 {
		t.Fatalf("first pass tried %v, want all four units", h.tries)
	}
	return h
}

func TestSkippedQueueWalksAgainWhenItsCohortChanges(t *testing.T) {
	h := twoFullQueues(t)
	h.pass()
	if len(h.tries) != 0 {
		t.Fatalf("a pass with nothing new tried %v", h.tries)
	}
	// Room in cohort a: only a's queue is worth a look, and a2 gets in.
	h.tree.Release("a", cpu(1))
	h.m.Freed("a")
	if diff := cmp.Diff([]string{"a2"}, h.pass()); diff != "" {
		t.Errorf("admitted after room in a (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a1", "a2"}, h.tries); diff != "" {
		t.Errorf("tried after room in a (-want +got):\n%s", diff)
	}
	// Everything invalidated: every queue is walked.
	h.m.Invalidate()
	h.pass()
	if diff := cmp.Diff([]string{"a1", "b1", "b2"}, sorted(h.tries)); diff != "" {
		t.Errorf("tried after Invalidate (-want +got):\n%s", diff)
	}
}

func TestSkippedQueueWalksAgainWhenAUnitComesOrChanges(t *testing.T) {
	h := twoFullQueues(t)
	h.tree.Release("b", cpu(1))
	// No event for b's cohort: a unit that comes is tried and takes the room.
	h.add("qb", "b3", "b", 0, 1)
	if diff := cmp.Diff([]string{"b3"}, h.pass()); diff != "" {
		t.Errorf("admitted after a unit came (-want +got):\n%s", diff)
	}
	// A unit that changes (here its priority) is tried again too.
	h.tree.Release("b", cpu(1))
	u, _ := h.m.Get("ns/b2")
	changed := *u
	changed.Priority, changed.Pending = 5, (&schedtypes.Unit{}).Pending
	h.m.Upsert(&changed, "qb", true)
	if diff := cmp.Diff([]string{"b2"}, h.pass()); diff != "" {
		t.Errorf("admitted after a unit changed (-want +got):\n%s", diff)
	}
}

// A unit that try answers with a failure worth trying in every pass (such as
// a stale entry) keeps its queue walked although nothing else happens.
func TestStaleAnswerKeepsTheQueueWalked(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(4)})
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority})
	h.add("q", "x", "a", 1, 1)
	stale := true
	try := func(u *schedtypes.Unit, s Settings) *schedtypes.Failure {
		if stale {
			h.tries = append(h.tries, u.Name)
			return &schedtypes.Failure{Stale: true, HeldBack: true}
		}
		return h.try(u, s)
	}
	h.m.Pass(try)
	stale = false
	var got []string
	for _, a := range h.m.Pass(try).Admitted {
		got = append(got, a.Unit.Name)
	}
	if diff := cmp.Diff([]string{"x"}, got); diff != "" {
		t.Errorf("second pass admitted (-want +got):\n%s", diff)
	}
}

// Under max-wait, time alone changes what a pass says: once the bound is
// over, the refused unit reserves its quota and the unit behind it is held
// back, with nothing else happening.
func TestMaxWaitQueueIsWalkedAsTimePasses(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(4)})
	now := t0
	h.m = NewManager(nil, WithClock(func() time.Time { return now }))
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority, MaxWait: time.Minute})
	h.tree.Charge("a", cpu(3))
	h.m.Upsert(&schedtypes.Unit{Key: "ns/big", Namespace: "ns", Name: "big", Created: t0, Quota: "a", Cohort: "a", Request: cpu(4), WaitingSince: t0}, "q", true)
	h.m.Upsert(&schedtypes.Unit{Key: "ns/small", Namespace: "ns", Name: "small", Created: t0.Add(time.Second), Quota: "a", Cohort: "a", Request: cpu(2), WaitingSince: t0}, "q", true)
	h.pass()
	now = t0.Add(2 * time.Minute)
	reasons := map[string]string{}
	for _, f := range h.m.Pass(h.try).Failed {
		reasons[f.Unit.Name] = f.Failure.Reason.String()
	}
	if got := reasons["small"]; got != "reserving/ns/big" {
		t.Errorf("small's reason after the bound = %q, want reserving/ns/big", got)
	}
}

// A queue whose priority changes moves in the serving order at once, though
// the order is kept between passes.
func TestServingOrderFollowsPriorityChanges(t *testing.T) {
	h := newHarness(t)
	h.m.UpsertQueue(Settings{Name: "x", Priority: 1})
	h.m.UpsertQueue(Settings{Name: "y", Priority: 2})
	if diff := cmp.Diff([]schedtypes.QueueName{"y", "x"}, h.m.QueueNames()); diff != "" {
		t.Fatalf("order (-want +got):\n%s", diff)
	}
	h.m.UpsertQueue(Settings{Name: "x", Priority: 3})
	h.m.UpsertQueue(Settings{Name: "z", Priority: 0})
	if diff := cmp.Diff([]schedtypes.QueueName{"x", "y", "z"}, h.m.QueueNames()); diff != "" {
		t.Errorf("order after changes (-want +got):\n%s", diff)
	}
	h.m.DeleteQueue("y")
	if diff := cmp.Diff([]schedtypes.QueueName{"x", "z"}, h.m.QueueNames()); diff != "" {
		t.Errorf("order after a delete (-want +got):\n%s", diff)
	}
}

func sorted(names []string) []string {
	out := append([]string(nil), names...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// After a covering refusal, the queue settles on the refused unit's lack
// alone: a unit behind it, refused earlier for less than room given back
// since, cannot fit before the refused one does (it asks at least as much
// of the same quota), so that room does not walk the queue again.
func TestCoveringRefusalSettlesOnItsOwnLack(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(8)})
	h.m.UpsertQueue(Settings{Name: "qa", Policy: schedv1alpha1.QueuePolicyPriority})
	covering := func(u *schedtypes.Unit, s Settings) *schedtypes.Failure {
		f := h.tryWithLack(u, s)
		if f != nil {
			f.Covering = true
		}
		return f
	}
	pass := func() []string {
		h.tries = nil
		var out []string
		for _, a := range h.m.Pass(covering).Admitted {
			out = append(out, a.Unit.Name)
		}
		return out
	}
	h.tree.Charge("a", cpu(6))
	h.add("qa", "tail", "a", 1, 4)
	pass()
	h.wantTried(t, "tail came, lacking 2 cpu", "tail")
	// Room taken elsewhere; then a unit of higher priority comes, lacking 3.
	h.tree.Charge("a", cpu(2))
	h.add("qa", "head", "a", 5, 3)
	pass()
	h.wantTried(t, "head came, lacking 3 cpu", "head")
	h.give(2)
	pass()
	h.wantTried(t, "2 cpu were given back: tail's old lack, not head's")
	h.give(1)
	if diff := cmp.Diff([]string{"head"}, pass()); diff != "" {
		t.Errorf("admitted once 3 cpu were given back (-want +got):\n%s", diff)
	}
	h.wantTried(t, "3 cpu were given back", "head", "tail")
}
