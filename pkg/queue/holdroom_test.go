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
	"strings"
	"testing"
	"time"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// failures maps the units a pass refused to their failure.
func failures(res *PassResult) map[string]*schedtypes.Failure {
	out := map[string]*schedtypes.Failure{}
	for _, f := range res.Failed {
		out[f.Unit.Name] = f.Failure
	}
	return out
}

// The numbers: quota q of max 4 CPU, a running 2-CPU unit of
// priority 1, a waiting 4-CPU unit of priority 100, then a 1-CPU unit of
// priority 1. By default Priority skips the big unit and admits the small
// one; with the queue's opt-in the big unit holds its room and the small one
// waits behind it.
func TestPriorityHoldsRoomOnlyWhenTheQueueOptsIn(t *testing.T) {
	for _, tc := range []struct {
		name       string
		hold       bool
		wantSmall  bool
		wantReason string
	}{
		{name: "default", wantSmall: true},
		{name: "opt-in", hold: true, wantReason: "held/q/ns/big"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newHeldWorld(t, quota.Spec{Name: "q", Max: cpu(4)})
			w.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority, HoldRoom: tc.hold})
			w.add("q", "running", "q", 1, 2)
			if got := names(w.pass(time.Hour).Admitted); len(got) != 1 || got[0] != "running" {
				t.Fatalf("admitted %v, want running", got)
			}
			w.add("q", "big", "q", 100, 4)
			if res := w.pass(time.Hour); len(res.Admitted) != 0 {
				t.Fatalf("admitted %v into 2 free CPUs, want none", names(res.Admitted))
			}
			w.add("q", "small", "q", 1, 1)
			res := w.pass(time.Hour)
			admitted := names(res.Admitted)
			if tc.wantSmall {
				if len(admitted) != 1 || admitted[0] != "small" {
					t.Fatalf("admitted %v, want small: Priority skips what does not fit", admitted)
				}
				if held := w.m.Held(); len(held) != 0 {
					t.Errorf("room held without the opt-in: %v", held)
				}
				return
			}
			if len(admitted) != 0 {
				t.Fatalf("admitted %v beside the room held for big", admitted)
			}
			f := failures(res)["small"]
			if f == nil || f.Reason.String() != tc.wantReason || !strings.Contains(f.Message, "waits behind ns/big (priority 100") {
				t.Fatalf("small: %+v, want reason %s naming big", f, tc.wantReason)
			}
		})
	}
}

// Block holds back its own quota only, unless its queue opts in: the head
// of quota a waits for 4 CPUs while a's 2-CPU unit runs; a 1-CPU unit of a
// waits behind it either way, and a 1-CPU unit of quota b, in the same
// cohort, is admitted unless a's queue holds room.
func TestBlockHoldsBackOtherQuotasOnlyWithTheOptIn(t *testing.T) {
	for _, tc := range []struct {
		name       string
		hold       bool
		wantB      bool
		wantReason string
	}{
		{name: "default", wantB: true},
		{name: "opt-in", hold: true, wantReason: "held/p/ns/big"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newHeldWorld(t, quota.Spec{Name: "p", Max: cpu(4)},
				quota.Spec{Name: "a", Parent: "p", Max: cpu(4)}, quota.Spec{Name: "b", Parent: "p", Max: cpu(4)})
			// a's queue is walked first, so b's unit is tried after big.
			w.m.UpsertQueue(Settings{Name: "a", Policy: schedv1alpha1.QueuePolicyBlock, Priority: 2, HoldRoom: tc.hold})
			w.m.UpsertQueue(Settings{Name: "b", Policy: schedv1alpha1.QueuePolicyPriority, Priority: 1})
			w.add("a", "running", "a", 1, 2)
			w.pass(time.Hour)
			w.add("a", "big", "a", 100, 4)
			w.pass(time.Hour)
			w.add("a", "small-a", "a", 1, 1)
			w.add("b", "small-b", "b", 1, 1)
			res := w.pass(time.Hour)
			f := failures(res)
			if g := f["small-a"]; g == nil || g.Reason.String() != "behind/ns/big" {
				t.Errorf("small-a: %+v, want it behind big, the head of its quota", g)
			}
			admitted := names(res.Admitted)
			if tc.wantB {
				if len(admitted) != 1 || admitted[0] != "small-b" {
					t.Fatalf("admitted %v, want small-b: Block holds back its own quota only", admitted)
				}
				return
			}
			if len(admitted) != 0 {
				t.Fatalf("admitted %v beside the room held for big", admitted)
			}
			if g := f["small-b"]; g == nil || g.Reason.String() != tc.wantReason {
				t.Fatalf("small-b: %+v, want reason %s", g, tc.wantReason)
			}
		})
	}
}

// Room held for an opted-in queue holds back units of a queue that did not
// opt in (the room is the holder's), and a queue that opts out gives up the
// room held for its units at once.
func TestHeldRoomFollowsTheHoldersOptIn(t *testing.T) {
	w := newHeldWorld(t, quota.Spec{Name: "p", Max: cpu(4)},
		quota.Spec{Name: "a", Parent: "p", Max: cpu(4)}, quota.Spec{Name: "b", Parent: "p", Max: cpu(4)})
	w.m.UpsertQueue(Settings{Name: "a", Policy: schedv1alpha1.QueuePolicyPriority, Priority: 2, HoldRoom: true})
	w.m.UpsertQueue(Settings{Name: "b", Policy: schedv1alpha1.QueuePolicyPriority, Priority: 1})
	w.add("b", "running", "b", 1, 2)
	w.pass(time.Hour)
	w.add("a", "big", "a", 100, 4)
	w.pass(time.Hour)
	w.add("b", "small", "b", 1, 1)
	res := w.pass(time.Hour)
	if g := failures(res)["small"]; len(res.Admitted) != 0 || g == nil || g.Reason.String() != "held/p/ns/big" {
		t.Fatalf("admitted %v, small %+v: want small held back by big's room", names(res.Admitted), g)
	}
	w.m.UpsertQueue(Settings{Name: "a", Policy: schedv1alpha1.QueuePolicyPriority, Priority: 2})
	if held := w.m.Held(); len(held) != 0 {
		t.Fatalf("room held after a's queue opted out: %v", held)
	}
	if got := names(w.pass(time.Hour).Admitted); len(got) != 1 || got[0] != "small" {
		t.Fatalf("admitted %v after the opt-out, want small", got)
	}
}
