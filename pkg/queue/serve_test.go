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

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// orderWorld is a tier of queues, each with a number of admissions left;
// step admits one of queue i while it has some.
type orderWorld struct {
	left   map[schedtypes.QueueName]int
	served []schedtypes.QueueName
}

func (w *orderWorld) step(names []schedtypes.QueueName) func(i int) bool {
	return func(i int) bool {
		if w.left[names[i]] == 0 {
			return false
		}
		w.left[names[i]]--
		w.served = append(w.served, names[i])
		return true
	}
}

func tierOf(prio int32, names ...schedtypes.QueueName) map[schedtypes.QueueName]*pendingQueue {
	out := map[schedtypes.QueueName]*pendingQueue{}
	for _, n := range names {
		out[n] = &pendingQueue{Settings: Settings{Name: n, Priority: prio}}
	}
	return out
}

func namesOf(tier []*pendingQueue) []schedtypes.QueueName {
	out := make([]schedtypes.QueueName, len(tier))
	for i, q := range tier {
		out[i] = q.Name
	}
	return out
}

func TestServingOrderTiersByPriorityAndRotatesTurns(t *testing.T) {
	queues := tierOf(5, "b", "a", "c")
	for n, q := range tierOf(9, "top") {
		queues[n] = q
	}
	o := newServingOrder()
	var firsts [][]schedtypes.QueueName
	for range 3 {
		tiers := o.tiers(queues)
		if len(tiers) != 2 || tiers[0][0].Name != "top" {
			t.Fatalf("tiers %v; want the priority-9 queue alone first", tiers)
		}
		firsts = append(firsts, namesOf(tiers[1]))
		names := namesOf(tiers[1])
		w := &orderWorld{left: map[schedtypes.QueueName]int{"a": 1, "b": 1, "c": 1}}
		o.serve(tiers[1], names, w.step(names))
	}
	want := [][]schedtypes.QueueName{{"a", "b", "c"}, {"b", "c", "a"}, {"c", "a", "b"}}
	if diff := cmp.Diff(want, firsts); diff != "" {
		t.Errorf("a tier served by turns starts one queue further each pass (-want +got):\n%s", diff)
	}
}

func TestServingOrderTakesTurnsOneAdmissionEach(t *testing.T) {
	o := newServingOrder()
	tier := o.tiers(tierOf(0, "a", "b"))[0]
	names := namesOf(tier)
	w := &orderWorld{left: map[schedtypes.QueueName]int{"a": 3, "b": 1}}
	o.serve(tier, names, w.step(names))
	if diff := cmp.Diff([]schedtypes.QueueName{"a", "b", "a", "a"}, w.served); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestServingOrderGuaranteedFirst(t *testing.T) {
	w := &orderWorld{left: map[schedtypes.QueueName]int{"a": 2, "b": 3}}
	o := newServingOrder()
	// b is below its min while it has more than one admission left.
	o.guaranteed = func(q schedtypes.QueueName) bool { return q == "b" && w.left["b"] > 1 }
	tier := o.tiers(tierOf(0, "a", "b"))[0]
	names := namesOf(tier)
	o.serve(tier, names, w.step(names))
	if diff := cmp.Diff([]schedtypes.QueueName{"b", "b", "a", "b", "a"}, w.served); diff != "" {
		t.Errorf("the queue below its min goes first while it stays below (-want +got):\n%s", diff)
	}
}

func TestServingOrderByShare(t *testing.T) {
	w := &orderWorld{left: map[schedtypes.QueueName]int{"a": 5, "b": 5}}
	shareOn := true
	o := newServingOrder()
	// a's share grows twice as fast as b's with each admission.
	o.share = func(q schedtypes.QueueName) float64 {
		if q == "a" {
			return 2 * float64(5-w.left["a"])
		}
		return float64(5 - w.left["b"])
	}
	o.shareOn = func() bool { return shareOn }
	tier := o.tiers(tierOf(0, "a", "b"))[0]
	names := namesOf(tier)
	o.serve(tier, names, w.step(names))
	want := []schedtypes.QueueName{"a", "b", "b", "a", "b", "b", "a", "b", "a", "a"}
	if diff := cmp.Diff(want, w.served); diff != "" {
		t.Errorf("each admission goes to the lowest share, ties in tier order (-want +got):\n%s", diff)
	}
	if o.rr[0] != 0 {
		t.Errorf("a tier served by share moved the turns to %d", o.rr[0])
	}
	// Off: turns again.
	shareOn = false
	w.left, w.served = map[schedtypes.QueueName]int{"a": 2, "b": 2}, nil
	o.serve(tier, names, w.step(names))
	if diff := cmp.Diff([]schedtypes.QueueName{"a", "b", "a", "b"}, w.served); diff != "" {
		t.Errorf("with sharing off (-want +got):\n%s", diff)
	}
}

func TestServingOrderSortsAgainOnlyAfterReset(t *testing.T) {
	queues := tierOf(0, "a")
	o := newServingOrder()
	o.tiers(queues)
	queues["b"] = &pendingQueue{Settings: Settings{Name: "b", Priority: 1}}
	if got := len(o.tiers(queues)); got != 1 {
		t.Errorf("%d tiers before reset; want the kept grouping (1)", got)
	}
	o.reset()
	if got := o.tiers(queues); len(got) != 2 || got[0][0].Name != "b" {
		t.Errorf("tiers after reset = %v; want b's tier first", got)
	}
}

func TestStartingSet(t *testing.T) {
	s := newStartingSet()
	s.add("q1", "ns/a")
	s.add("q1", "ns/b")
	s.add("q1", "ns/a") // again: no change
	if diff := cmp.Diff([]schedtypes.UnitKey{"ns/a", "ns/b"}, s.of("q1")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// A unit admitted again by another queue moves.
	s.add("q2", "ns/b")
	if diff := cmp.Diff([]schedtypes.UnitKey{"ns/a"}, s.of("q1")); diff != "" {
		t.Errorf("q1 after ns/b moved (-want +got):\n%s", diff)
	}
	if !s.waits("q2") {
		t.Error("q2 does not wait for ns/b")
	}
	if !s.remove("ns/a") || s.remove("ns/a") {
		t.Error("remove reports wrongly whether the unit was there")
	}
	if s.waits("q1") || len(s.byQueue) != 1 {
		t.Errorf("q1 still waits, or an empty queue entry stays: %v", s.byQueue)
	}
	if got := s.of("none"); len(got) != 0 {
		t.Errorf("of an unknown queue = %v", got)
	}
}
