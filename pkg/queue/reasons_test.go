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

// messages runs a pass and returns what each unit that failed was told.
func (h *harness) messages() map[string]string {
	out := map[string]string{}
	for _, f := range h.m.Pass(h.try).Failed {
		out[f.Unit.Name] = f.Failure.Message
	}
	return out
}

// Under Block each unit names the unit directly ahead of it in its quota,
// so admitting the head changes the text of one unit only.
func TestBlockNamesTheUnitDirectlyAhead(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(10)}, quota.Spec{Name: "b", Max: cpu(10)})
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyBlock})
	h.tree.Charge("a", cpu(6))
	h.add("q", "head", "a", 10, 8)
	h.add("q", "one", "a", 5, 1)
	h.add("q", "other", "b", 5, 20) // another quota, never fits: no part of a's line
	h.add("q", "two", "a", 5, 1)
	h.add("q", "three", "a", 5, 1)
	behind := func(ahead string) string {
		return "waiting behind ns/" + ahead + ", the unit directly ahead of it in quota a of Block queue q, which admits the units of a quota in order"
	}
	got := h.messages()
	want := map[string]string{"one": behind("head"), "two": behind("one"), "three": behind("two")}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s says %q\nwant %q", name, got[name], w)
		}
	}
	// 4 cpu are freed: the head (8) is admitted and fills the quota, so
	// "one" becomes the blocked head: only its own text changes.
	h.tree.Release("a", cpu(4))
	h.m.Freed("a")
	res := h.m.Pass(h.try)
	if len(res.Admitted) != 1 || res.Admitted[0].Unit.Name != "head" {
		t.Fatalf("admitted %v, want only head", res.Admitted)
	}
	changed := map[string]string{}
	for _, f := range res.Failed {
		if f.Changed {
			changed[f.Unit.Name] = f.Failure.Reason.String()
		}
	}
	if diff := cmp.Diff(map[string]string{"one": "short/a/cpu"}, changed); diff != "" {
		t.Errorf("reasons changed by one admission (-want +got):\n%s", diff)
	}
}

// A low-band unit of an Intelligent queue names the last high-band unit of
// its quota that waits; high-band units name the one directly ahead.
func TestIntelligentLowBandNamesTheHighBand(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(10)})
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyIntelligent, Threshold: 4})
	h.tree.Charge("a", cpu(6))
	h.add("q", "high-1", "a", 9, 8)
	h.add("q", "high-2", "a", 5, 1)
	h.add("q", "low-1", "a", 2, 1)
	h.add("q", "low-2", "a", 1, 1)
	got := h.messages()
	low := "held back: high-band unit ns/high-2 (priority 5, koord-queue/priority-threshold 4) of Intelligent queue q waits for quota a; low-band units may not take its room"
	want := map[string]string{
		"high-2": "waiting behind ns/high-1, the unit directly ahead of it in quota a among the high-band units (priority 4 and above, koord-queue/priority-threshold) of Intelligent queue q, which are admitted in order",
		"low-1":  low, "low-2": low,
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s says %q\nwant %q", name, got[name], w)
		}
	}
}

// Behind a preemptor in a Priority queue, units name the preemptor.
func TestPriorityNamesThePreemptor(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(4)})
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority})
	h.tree.Charge("a", cpu(4))
	h.add("q", "boss", "a", 9, 4)
	h.add("q", "minion", "a", 1, 1)
	got := map[string]string{}
	for _, f := range h.m.Pass(func(u *schedtypes.Unit, _ Settings) *schedtypes.Failure {
		if u.Name == "boss" {
			return &schedtypes.Failure{Reason: schedtypes.Reason{Kind: schedtypes.WaitPreempting, Subject: "a"}, Preempting: true, Message: "preempting"}
		}
		return h.try(u, Settings{})
	}).Failed {
		got[f.Unit.Name] = f.Failure.Message
	}
	want := "held back: room is being made in quota a by preemption for ns/boss (priority 9); later units of the quota wait until it is admitted"
	if got["minion"] != want {
		t.Errorf("minion says %q\nwant %q", got["minion"], want)
	}
}

// Units beyond max-depth that were never examined are told so, once; a unit
// examined before keeps its own reason.
func TestUnitsBeyondMaxDepthAreTold(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(2)})
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority, MaxDepth: 2})
	h.tree.Charge("a", cpu(2))
	for i, name := range []string{"u1", "u2", "u3", "u4"} {
		h.add("q", name, "a", int32(10-i), 1)
	}
	res := h.m.Pass(h.try)
	got := map[string]string{}
	for _, f := range res.Failed {
		got[f.Unit.Name] = f.Failure.Reason.String()
	}
	want := map[string]string{"u1": "short/a/cpu", "u2": "short/a/cpu", "u3": "depth/q", "u4": "depth/q"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
	if m := res.Failed[len(res.Failed)-1].Failure.Message; m != "waiting in queue q: not examined yet, as each pass looks at the first 2 units of the queue (koord-queue/max-depth); it is examined once the units ahead of it are admitted" {
		t.Errorf("message %q", m)
	}
	// Nothing changed: nobody is told again.
	for _, f := range h.m.Pass(h.try).Failed {
		if f.Changed {
			t.Errorf("%s told again: %s", f.Unit.Name, f.Failure.Reason)
		}
	}
	// A new unit past the depth is told too.
	h.add("q", "u5", "a", 1, 1)
	res = h.m.Pass(h.try)
	told := 0
	for _, f := range res.Failed {
		if f.Changed {
			told++
			if f.Unit.Name != "u5" || f.Failure.Reason.String() != "depth/q" {
				t.Errorf("%s told %s", f.Unit.Name, f.Failure.Reason)
			}
		}
	}
	if told != 1 {
		t.Errorf("%d units told after u5 came, want 1", told)
	}
}
