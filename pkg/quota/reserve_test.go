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

package quota

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// The tree of these tests: root <- p (max cpu 24) <- a, b (max cpu 24 each),
// and root <- q (max cpu 24), a cohort of its own.
func cohorts(t *testing.T) *Tree {
	t.Helper()
	return treeOf(t,
		Spec{Name: "p", Max: res("cpu", "24")},
		Spec{Name: "a", Parent: "p", Max: res("cpu", "24")},
		Spec{Name: "b", Parent: "p", Max: res("cpu", "24")},
		Spec{Name: "q", Max: res("cpu", "24")})
}

// treeOf is a tree of specs, parents first, without overselling.
func treeOf(t *testing.T, specs ...Spec) *Tree {
	t.Helper()
	tr := New(1)
	for _, s := range specs {
		if err := tr.Upsert(s); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

func TestHeldRoomCheck(t *testing.T) {
	big := schedtypes.Reservation{Unit: "ns/big", Priority: 200, Quota: "a", Request: res("cpu", "20")}
	medium := schedtypes.Reservation{Unit: "ns/medium", Priority: 100, Quota: "b", Request: res("cpu", "5")}
	cases := []struct {
		name    string
		used    map[schedtypes.QuotaName]schedtypes.Resources
		quota   schedtypes.QuotaName
		req     schedtypes.Resources
		held    []schedtypes.Reservation
		wantKey string
		// wantHeld and wantOthers describe the shortage when there is one.
		wantHeld, wantOthers int64
	}{
		{name: "nothing held", used: map[schedtypes.QuotaName]schedtypes.Resources{"b": res("cpu", "10")}, quota: "b", req: res("cpu", "1")},
		{name: "a sibling's room counts at the parent", used: map[schedtypes.QuotaName]schedtypes.Resources{"b": res("cpu", "10")}, quota: "b", req: res("cpu", "1"),
			held: []schedtypes.Reservation{big}, wantKey: "held/p/ns/big", wantHeld: 20000},
		{name: "fits beside the room", used: map[schedtypes.QuotaName]schedtypes.Resources{"b": res("cpu", "3")}, quota: "b", req: res("cpu", "1"),
			held: []schedtypes.Reservation{big}},
		{name: "rooms add up and the first is named", used: map[schedtypes.QuotaName]schedtypes.Resources{"b": res("cpu", "1")}, quota: "b", req: res("cpu", "1"),
			held: []schedtypes.Reservation{big, medium}, wantKey: "held/p/ns/big", wantHeld: 25000, wantOthers: 1},
		{name: "another cohort's room does not count", used: map[schedtypes.QuotaName]schedtypes.Resources{"q": res("cpu", "10")}, quota: "q", req: res("cpu", "1"),
			held: []schedtypes.Reservation{big}},
		{name: "a resource the room does not ask is free", used: map[schedtypes.QuotaName]schedtypes.Resources{"b": res("cpu", "10")}, quota: "b", req: res("memory", "1Gi"),
			held: []schedtypes.Reservation{big}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := cohorts(t)
			for q, r := range c.used {
				tr.Charge(q, r)
			}
			if s := tr.Check(c.quota, c.req); s != nil {
				t.Fatalf("the request does not fit on its own: %s", s.Message())
			}
			s := NewHeldRoom(tr).Check(c.quota, c.req, c.held)
			if c.wantKey == "" {
				if s != nil {
					t.Fatalf("refused: %s", s.Message())
				}
				return
			}
			if s == nil {
				t.Fatalf("admitted, want refused with %s", c.wantKey)
			}
			if s.Reason().String() != c.wantKey || s.Held != c.wantHeld || int64(s.Others) != c.wantOthers {
				t.Errorf("got key %v, held %d, others %d; want %s, %d, %d", s.Reason(), s.Held, s.Others, c.wantKey, c.wantHeld, c.wantOthers)
			}
		})
	}
}

func TestHeldRoomCouldFit(t *testing.T) {
	low := func(q schedtypes.QuotaName, cpu string) schedtypes.Holding {
		return schedtypes.Holding{Key: schedtypes.UnitKey("ns/" + q), Quota: q, Used: res("cpu", cpu), Priority: 50}
	}
	cases := []struct {
		name  string
		used  map[schedtypes.QuotaName]schedtypes.Resources
		quota schedtypes.QuotaName
		req   schedtypes.Resources
		gone  []schedtypes.Holding
		want  bool
	}{
		{name: "room freed by lower units in a sibling", used: map[schedtypes.QuotaName]schedtypes.Resources{"a": res("cpu", "4"), "b": res("cpu", "20")}, quota: "a", req: res("cpu", "20"),
			gone: []schedtypes.Holding{low("b", "20")}, want: true},
		{name: "what others hold stays", used: map[schedtypes.QuotaName]schedtypes.Resources{"a": res("cpu", "4"), "b": res("cpu", "20")}, quota: "a", req: res("cpu", "20"),
			gone: []schedtypes.Holding{low("b", "10")}},
		{name: "above max never", quota: "a", req: res("cpu", "30")},
		{name: "a missing quota never", quota: "nope", req: res("cpu", "1")},
		{name: "holdings of another cohort free nothing here", used: map[schedtypes.QuotaName]schedtypes.Resources{"a": res("cpu", "24"), "q": res("cpu", "24")}, quota: "a", req: res("cpu", "1"),
			gone: []schedtypes.Holding{low("q", "24")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := cohorts(t)
			for q, r := range c.used {
				tr.Charge(q, r)
			}
			held := map[schedtypes.QuotaName][]schedtypes.Holding{}
			for _, h := range c.gone {
				held[h.Quota] = append(held[h.Quota], h)
			}
			// A holding of the same quota that stays frees nothing.
			held["a"] = append(held["a"], schedtypes.Holding{Key: "ns/stays", Quota: "a", Used: res("cpu", "4"), Priority: 500})
			gone := func(h schedtypes.Holding) bool { return h.Priority < 100 }
			if got := NewHeldRoom(tr).CouldFit(c.quota, c.req, held, gone); got != c.want {
				t.Errorf("CouldFit = %v, want %v", got, c.want)
			}
		})
	}
}

// Room held for a unit that would borrow does not hold back a unit of a
// sibling quota that stays within its min; it still holds back everyone
// else.
func TestHeldRoomYieldsToAGuarantee(t *testing.T) {
	// p (max 60) <- a, b (min 20, max 40 each), c (no min, max 40). Every
	// request below fits on its own but not beside the 20 held for big.
	tree := func(t *testing.T, used map[schedtypes.QuotaName]string) *Tree {
		t.Helper()
		tr := treeOf(t,
			Spec{Name: "p", Max: res("cpu", "60")},
			Spec{Name: "a", Parent: "p", Min: res("cpu", "20"), Max: res("cpu", "40")},
			Spec{Name: "b", Parent: "p", Min: res("cpu", "20"), Max: res("cpu", "40")},
			Spec{Name: "c", Parent: "p", Max: res("cpu", "40")})
		for q, cpu := range used {
			tr.Charge(q, res("cpu", cpu))
		}
		return tr
	}
	big := schedtypes.Reservation{Unit: "ns/big", Priority: 200, Quota: "a", Request: res("cpu", "20")}
	cases := []struct {
		name    string
		used    map[schedtypes.QuotaName]string
		quota   schedtypes.QuotaName
		req     string
		refused bool
	}{
		// a is at its min: big would borrow, and b's unit stays within b's min.
		{name: "a borrower's room yields to a sibling within its min", used: map[schedtypes.QuotaName]string{"a": "20", "b": "10", "c": "20"}, quota: "b", req: "5"},
		{name: "not to a sibling that would borrow itself", used: map[schedtypes.QuotaName]string{"a": "20", "b": "18"}, quota: "b", req: "5", refused: true},
		{name: "not to a sibling without a min", used: map[schedtypes.QuotaName]string{"a": "20", "c": "20"}, quota: "c", req: "5", refused: true},
		{name: "not to a unit of the borrower's own quota", used: map[schedtypes.QuotaName]string{"a": "5", "b": "20", "c": "20"}, quota: "a", req: "1", refused: true},
		// big fits a's min: both are guaranteed, and the room stays held.
		{name: "room held within its own min stays held", used: map[schedtypes.QuotaName]string{"c": "38"}, quota: "b", req: "5", refused: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := tree(t, c.used)
			req := res("cpu", c.req)
			if s := tr.Check(c.quota, req); s != nil {
				t.Fatalf("the request does not fit on its own: %s", s.Message())
			}
			s := NewHeldRoom(tr).Check(c.quota, req, []schedtypes.Reservation{big})
			switch {
			case c.refused && s == nil:
				t.Fatal("admitted beside the held room, want refused")
			case !c.refused && s != nil:
				t.Fatalf("refused: %s", s.Message())
			}
		})
	}
}

// TestHeldRoomCouldFitMatchesReleasing: CouldFit answers what releasing the
// holdings it picks and checking the request would, on a three-level tree
// with a quota that does not lend its min, two resources and random holdings.
func TestHeldRoomCouldFitMatchesReleasing(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 35))
	quotas := []schedtypes.QuotaName{"a", "b", "c", "d", "q"}
	for round := range 500 {
		tr := treeOf(t,
			Spec{Name: "root", Max: res("cpu", "40", "memory", "40")},
			Spec{Name: "p", Parent: "root", Max: res("cpu", "30")},
			Spec{Name: "a", Parent: "p", Max: res("cpu", "20", "memory", "20")},
			Spec{Name: "b", Parent: "p", Min: res("cpu", "6"), Max: res("cpu", "20"), NoLend: true},
			Spec{Name: "c", Parent: "root", Max: res("cpu", "20", "memory", "30")},
			Spec{Name: "d", Parent: "c", Max: res("memory", "10")},
			Spec{Name: "q", Max: res("cpu", "10")})
		held := map[schedtypes.QuotaName][]schedtypes.Holding{}
		for i := range rng.IntN(12) {
			q := quotas[rng.IntN(len(quotas))]
			used := schedtypes.Resources{"cpu": int64(1+rng.IntN(6)) * 1000}
			if rng.IntN(2) == 0 {
				used["memory"] = int64(1+rng.IntN(6)) * 1000
			}
			h := schedtypes.Holding{Key: schedtypes.UnitKey(fmt.Sprintf("ns/u%d", i)), Quota: q, Priority: int32(rng.IntN(3)), Used: used}
			tr.Charge(q, h.Used)
			held[q] = append(held[q], h)
		}
		name := quotas[rng.IntN(len(quotas))]
		req := schedtypes.Resources{"cpu": int64(1+rng.IntN(12)) * 1000}
		if rng.IntN(2) == 0 {
			req["memory"] = int64(1+rng.IntN(12)) * 1000
		}
		below := int32(rng.IntN(4))
		gone := func(h schedtypes.Holding) bool { return h.Priority < below }
		got := NewHeldRoom(tr).CouldFit(name, req, held, gone)
		for _, hs := range held {
			for _, h := range hs {
				if gone(h) {
					tr.Release(h.Quota, h.Used)
				}
			}
		}
		if want := tr.Check(name, req) == nil; got != want {
			t.Fatalf("round %d: CouldFit(%s, %v) below priority %d = %v, releasing and checking says %v; holdings %v", round, name, req, below, got, want, held)
		}
	}
}
