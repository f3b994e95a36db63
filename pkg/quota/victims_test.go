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
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func holding(key schedtypes.UnitKey, quotaName schedtypes.QuotaName, prio int32, age time.Duration, cpuCores int64) schedtypes.Holding {
	return schedtypes.Holding{Key: key, Quota: quotaName, Priority: prio, AllocatedAt: now.Add(-age), Used: schedtypes.Resources{"cpu": cpuCores * 1000}}
}

// twoLevel is parent max 10, children a and b with min 5, max 10.
func twoLevel(t *testing.T) *Tree {
	t.Helper()
	tr := New(1)
	for _, s := range []Spec{
		{Name: "parent", Max: schedtypes.Resources{"cpu": 10000}},
		{Name: "a", Parent: "parent", Min: schedtypes.Resources{"cpu": 5000}, Max: schedtypes.Resources{"cpu": 10000}},
		{Name: "b", Parent: "parent", Min: schedtypes.Resources{"cpu": 5000}, Max: schedtypes.Resources{"cpu": 10000}},
	} {
		if err := tr.Upsert(s); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

func keys(v schedtypes.Victims) []schedtypes.UnitKey {
	var out []schedtypes.UnitKey
	for _, h := range v.Units {
		out = append(out, h.Key)
	}
	return out
}

func chargeAll(tr *Tree, held map[schedtypes.QuotaName][]schedtypes.Holding) {
	for _, hs := range held {
		for _, h := range hs {
			tr.Charge(h.Quota, h.Used)
		}
	}
}

// A borrows all of the parent while B is idle; B's new unit reclaims exactly 5.
func TestReclaimExactlyWhatIsNeeded(t *testing.T) {
	tr := twoLevel(t)
	held := map[schedtypes.QuotaName][]schedtypes.Holding{}
	for i := range 10 {
		held["a"] = append(held["a"], holding(schedtypes.UnitKey(fmt.Sprintf("a%d", i)), "a", int32(i%3), time.Duration(10-i)*time.Hour, 1))
	}
	chargeAll(tr, held)
	if tr.Check("a", schedtypes.Resources{"cpu": 1}) == nil {
		t.Fatal("parent should be full")
	}
	v := NewVictimSelector(tr).Select(Preemption{Quota: "b", Request: schedtypes.Resources{"cpu": 5000}, Priority: 0, Reclaim: true, Now: now}, held)
	if !v.Reclaim || len(v.Units) != 5 {
		t.Fatalf("victims %v (reclaim %v), want 5", keys(v), v.Reclaim)
	}
	// Lowest priority first (priority 0: a0, a3, a6, a9), then most recently admitted.
	if diff := cmp.Diff([]schedtypes.UnitKey{"a9", "a6", "a3", "a0", "a7"}, keys(v)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	a, _ := tr.Get("a")
	if a.Used["cpu"] != 10000 {
		t.Errorf("tree changed by selection: a uses %d", a.Used["cpu"])
	}
}

func TestReclaimRespectsProtectionAndMin(t *testing.T) {
	tr := twoLevel(t)
	held := map[schedtypes.QuotaName][]schedtypes.Holding{
		"a": {holding("young", "a", 0, time.Minute, 5), holding("old", "a", 0, time.Hour, 5)},
	}
	chargeAll(tr, held)
	v := NewVictimSelector(tr).Select(Preemption{Quota: "b", Request: schedtypes.Resources{"cpu": 5000}, Reclaim: true, Protection: 5 * time.Minute, Now: now}, held)
	if diff := cmp.Diff([]schedtypes.UnitKey{"old"}, keys(v)); diff != "" {
		t.Errorf("victims (-want +got):\n%s", diff)
	}
	// All protected: nothing to reclaim.
	v = NewVictimSelector(tr).Select(Preemption{Quota: "b", Request: schedtypes.Resources{"cpu": 5000}, Reclaim: true, Protection: 2 * time.Hour, Now: now}, held)
	if len(v.Units) != 0 {
		t.Errorf("reclaimed protected units %v", keys(v))
	}
	// Above its own min, b may not reclaim.
	v = NewVictimSelector(tr).Select(Preemption{Quota: "b", Request: schedtypes.Resources{"cpu": 6000}, Reclaim: true, Now: now}, held)
	if len(v.Units) != 0 {
		t.Errorf("reclaimed beyond min: %v", keys(v))
	}
}

// A quota's min names cpu only; its unit asks for cpu and memory. Memory has
// room, cpu is lent to a sibling: the unit reclaims cpu, as its min allows,
// and the memory its min does not name does not stop it.
func TestReclaimJudgesOnlyTheResourcesThatAreShort(t *testing.T) {
	tr := New(1)
	for _, s := range []Spec{
		{Name: "parent", Min: schedtypes.Resources{"cpu": 4000}, Max: schedtypes.Resources{"cpu": 4000, "memory": 1 << 40}},
		{Name: "lender", Parent: "parent", Min: schedtypes.Resources{"cpu": 2000}, Max: schedtypes.Resources{"cpu": 4000, "memory": 1 << 40}},
		{Name: "borrower", Parent: "parent", Min: schedtypes.Resources{"cpu": 2000}, Max: schedtypes.Resources{"cpu": 4000, "memory": 1 << 40}},
	} {
		if err := tr.Upsert(s); err != nil {
			t.Fatal(err)
		}
	}
	gi := int64(1 << 30)
	held := map[schedtypes.QuotaName][]schedtypes.Holding{"borrower": {
		{Key: "b1", Quota: "borrower", AllocatedAt: now.Add(-time.Hour), Used: schedtypes.Resources{"cpu": 2000, "memory": gi}},
		{Key: "b2", Quota: "borrower", AllocatedAt: now.Add(-time.Minute), Used: schedtypes.Resources{"cpu": 2000, "memory": gi}},
	}}
	chargeAll(tr, held)
	req := schedtypes.Resources{"cpu": 2000, "memory": gi}
	if tr.Check("lender", req) == nil {
		t.Fatal("the parent's cpu should be full")
	}
	v := NewVictimSelector(tr).Select(Preemption{Quota: "lender", Request: req, Reclaim: true, Now: now}, held)
	if !v.Reclaim {
		t.Fatalf("no reclaim: victims %v", keys(v))
	}
	if diff := cmp.Diff([]schedtypes.UnitKey{"b2"}, keys(v)); diff != "" {
		t.Errorf("victims (-want +got):\n%s", diff)
	}
	// Asking for more cpu than its min, the lender may not reclaim.
	v = NewVictimSelector(tr).Select(Preemption{Quota: "lender", Request: schedtypes.Resources{"cpu": 3000, "memory": gi}, Reclaim: true, Now: now}, held)
	if len(v.Units) != 0 {
		t.Errorf("reclaimed beyond min: %v", keys(v))
	}
}

func TestReclaimNeverTakesFromQuotaWithinMin(t *testing.T) {
	tr := twoLevel(t)
	held := map[schedtypes.QuotaName][]schedtypes.Holding{
		"a": {holding("a1", "a", 0, time.Hour, 5)},
		"b": {holding("b1", "b", 0, time.Hour, 3)},
	}
	chargeAll(tr, held)
	// b (3 used) asks 2 more: parent has 2 free. Fits, no victims needed.
	if v := NewVictimSelector(tr).Select(Preemption{Quota: "b", Request: schedtypes.Resources{"cpu": 2000}, Reclaim: true, Now: now}, held); len(v.Units) != 0 {
		t.Errorf("victims %v for a request that fits", keys(v))
	}
	tr.Charge("b", schedtypes.Resources{"cpu": 2000})
	// Now a asks 1 within its min: parent full, b is at its min (5): nothing.
	v := NewVictimSelector(tr).Select(Preemption{Quota: "a", Request: schedtypes.Resources{"cpu": 1000}, Reclaim: true, Now: now}, held)
	if len(v.Units) != 0 {
		t.Errorf("took from a quota within its min: %v", keys(v))
	}
}

func TestPreemptLowerPriorityOnlyAsNeeded(t *testing.T) {
	tr := New(1)
	_ = tr.Upsert(Spec{Name: "q", Max: schedtypes.Resources{"cpu": 4000}})
	held := map[schedtypes.QuotaName][]schedtypes.Holding{"q": {
		holding("low-small", "q", 1, time.Hour, 1),
		holding("low-big", "q", 1, 2*time.Hour, 2),
		holding("high", "q", 9, time.Hour, 1),
	}}
	chargeAll(tr, held)
	v := NewVictimSelector(tr).Select(Preemption{Quota: "q", Request: schedtypes.Resources{"cpu": 2000}, Priority: 5, Preempt: true, Now: now}, held)
	// low-small goes first (more recent) but alone is not enough; with low-big
	// it is, and then low-small turns out unneeded.
	if diff := cmp.Diff([]schedtypes.UnitKey{"low-big"}, keys(v)); diff != "" {
		t.Errorf("victims (-want +got):\n%s", diff)
	}
	if v := NewVictimSelector(tr).Select(Preemption{Quota: "q", Request: schedtypes.Resources{"cpu": 4000}, Priority: 5, Preempt: true, Now: now}, held); len(v.Units) != 0 {
		t.Errorf("evicted %v although the high-priority unit keeps it from fitting", keys(v))
	}
}

// A unit the search leaves out is never chosen, nor waited for.
func TestLeftOutUnitsAreNotVictims(t *testing.T) {
	tr := New(1)
	_ = tr.Upsert(Spec{Name: "q", Max: schedtypes.Resources{"cpu": 4000}})
	held := map[schedtypes.QuotaName][]schedtypes.Holding{"q": {
		holding("low-small", "q", 1, time.Hour, 1),
		holding("low-big", "q", 1, 2*time.Hour, 2),
		holding("going", "q", 1, time.Hour, 1),
	}}
	held["q"][2].Evicting = true
	chargeAll(tr, held)
	leave := func(k schedtypes.UnitKey) bool { return k == "low-big" || k == "going" }
	v := NewVictimSelector(tr).Select(Preemption{Quota: "q", Request: schedtypes.Resources{"cpu": 1000}, Priority: 5, Preempt: true, Now: now, Leave: leave}, held)
	if diff := cmp.Diff([]schedtypes.UnitKey{"low-small"}, keys(v)); diff != "" || v.Waiting {
		t.Errorf("victims (-want +got):\n%s (waiting %v)", diff, v.Waiting)
	}
	if v := NewVictimSelector(tr).Select(Preemption{Quota: "q", Request: schedtypes.Resources{"cpu": 2000}, Priority: 5, Preempt: true, Now: now, Leave: leave}, held); len(v.Units) != 0 || v.Waiting {
		t.Errorf("got %+v with the units left out, want nobody", v)
	}
}

func TestEvictingUnitsAreWaitedFor(t *testing.T) {
	tr := New(1)
	_ = tr.Upsert(Spec{Name: "q", Max: schedtypes.Resources{"cpu": 2000}})
	held := map[schedtypes.QuotaName][]schedtypes.Holding{"q": {holding("going", "q", 1, time.Hour, 2)}}
	held["q"][0].Evicting = true
	chargeAll(tr, held)
	v := NewVictimSelector(tr).Select(Preemption{Quota: "q", Request: schedtypes.Resources{"cpu": 2000}, Priority: 5, Preempt: true, Now: now}, held)
	if !v.Waiting || len(v.Units) != 0 {
		t.Errorf("got %+v, want waiting", v)
	}
}

// A protection period that keeps victims out says when it ends, so the
// caller can look again then; at that moment the same search finds them.
func TestProtectionEndIsReported(t *testing.T) {
	tr := twoLevel(t)
	held := map[schedtypes.QuotaName][]schedtypes.Holding{
		"a": {holding("a-young", "a", 0, time.Minute, 5), holding("a-younger", "a", 0, 30*time.Second, 5)},
	}
	chargeAll(tr, held)
	p := Preemption{Quota: "b", Request: schedtypes.Resources{"cpu": 5000}, Reclaim: true, Protection: 5 * time.Minute, Now: now}
	v := NewVictimSelector(tr).Select(p, held)
	if len(v.Units) != 0 {
		t.Fatalf("reclaimed protected units %v", keys(v))
	}
	// a-young was admitted a minute ago: its protection ends first.
	if want := now.Add(4 * time.Minute); !v.RetryAt.Equal(want) {
		t.Errorf("RetryAt = %v, want %v", v.RetryAt, want)
	}
	// It is also the unit that goes then, and the caller can say so.
	if diff := cmp.Diff([]schedtypes.UnitKey{"a-young"}, holdingKeys(v.Protected)); diff != "" || !v.FreeAt.Equal(now.Add(4*time.Minute)) || !v.Reclaim {
		t.Errorf("protected %v until %v (reclaim %v); want a-young until %v by reclaim (-want +got):\n%s",
			holdingKeys(v.Protected), v.FreeAt, v.Reclaim, now.Add(4*time.Minute), diff)
	}
	p.Now = v.RetryAt
	if diff := cmp.Diff([]schedtypes.UnitKey{"a-young"}, keys(NewVictimSelector(tr).Select(p, held))); diff != "" {
		t.Errorf("victims at the end of the protection (-want +got):\n%s", diff)
	}
}

// Preemption inside a quota honours the protection period too.
func TestPreemptionHonoursProtection(t *testing.T) {
	tr := New(1)
	_ = tr.Upsert(Spec{Name: "q", Max: schedtypes.Resources{"cpu": 4000}})
	held := map[schedtypes.QuotaName][]schedtypes.Holding{"q": {holding("low", "q", 1, 10*time.Second, 4)}}
	chargeAll(tr, held)
	p := Preemption{Quota: "q", Request: schedtypes.Resources{"cpu": 4000}, Priority: 5, Preempt: true, Protection: time.Minute, Now: now}
	v := NewVictimSelector(tr).Select(p, held)
	if len(v.Units) != 0 || !v.RetryAt.Equal(now.Add(50*time.Second)) {
		t.Fatalf("victims %v, RetryAt %v; want none until %v", keys(v), v.RetryAt, now.Add(50*time.Second))
	}
	p.Now = v.RetryAt
	if diff := cmp.Diff([]schedtypes.UnitKey{"low"}, keys(NewVictimSelector(tr).Select(p, held))); diff != "" {
		t.Errorf("victims after the protection (-want +got):\n%s", diff)
	}
}

func holdingKeys(hs []schedtypes.Holding) []schedtypes.UnitKey {
	out := make([]schedtypes.UnitKey, 0, len(hs))
	for _, h := range hs {
		out = append(out, h.Key)
	}
	return out
}

// When the first protection to end frees too little, the units named are
// those chosen at the first end that frees enough.
func TestProtectedVictimsLookAhead(t *testing.T) {
	tr := twoLevel(t)
	held := map[schedtypes.QuotaName][]schedtypes.Holding{
		"a": {holding("a-1", "a", 0, time.Minute, 3), holding("a-2", "a", 0, 30*time.Second, 7)},
	}
	chargeAll(tr, held)
	// b needs 5 cpu: a-1 alone (protected 4 more minutes) frees too little.
	p := Preemption{Quota: "b", Request: schedtypes.Resources{"cpu": 5000}, Reclaim: true, Protection: 5 * time.Minute, Now: now}
	v := NewVictimSelector(tr).Select(p, held)
	if len(v.Units) != 0 || !v.RetryAt.Equal(now.Add(4*time.Minute)) {
		t.Fatalf("victims %v, RetryAt %v", keys(v), v.RetryAt)
	}
	if diff := cmp.Diff([]schedtypes.UnitKey{"a-2"}, holdingKeys(v.Protected)); diff != "" ||
		!v.FreeAt.Equal(now.Add(4*time.Minute+30*time.Second)) {
		t.Errorf("protected %v until %v, want a-2 until %v (-want +got):\n%s", holdingKeys(v.Protected), v.FreeAt, now.Add(4*time.Minute+30*time.Second), diff)
	}
}

// Reclaim across quotas: priority orders victims inside a quota only. Quota
// a borrows 4 above its min with units of the highest priority, c borrows 1
// with a unit of priority 0; b needs 2 back. The units come from a, the
// quota that borrows most, whatever their priority; within a, the most
// recently admitted goes first among equals.
func TestReclaimTakesFromTheQuotaThatBorrowsMost(t *testing.T) {
	tr := New(1)
	for _, s := range []Spec{
		{Name: "parent", Max: schedtypes.Resources{"cpu": 10000}},
		{Name: "a", Parent: "parent", Min: schedtypes.Resources{"cpu": 3000}, Max: schedtypes.Resources{"cpu": 10000}},
		{Name: "b", Parent: "parent", Min: schedtypes.Resources{"cpu": 3000}, Max: schedtypes.Resources{"cpu": 10000}},
		{Name: "c", Parent: "parent", Min: schedtypes.Resources{"cpu": 2000}, Max: schedtypes.Resources{"cpu": 10000}},
	} {
		if err := tr.Upsert(s); err != nil {
			t.Fatal(err)
		}
	}
	const top = int32(1<<31 - 1)
	held := map[schedtypes.QuotaName][]schedtypes.Holding{
		"a": {holding("a-old", "a", top, 3*time.Hour, 3), holding("a-mid", "a", top, 2*time.Hour, 2), holding("a-new", "a", top, time.Hour, 2)},
		"c": {holding("c-low", "c", 0, time.Hour, 2), holding("c-min", "c", 0, 2*time.Hour, 1)},
	}
	chargeAll(tr, held) // a 7 (min 3), c 3 (min 2): the parent's 10 are used
	v := NewVictimSelector(tr).Select(Preemption{Quota: "b", Request: schedtypes.Resources{"cpu": 2000}, Reclaim: true, Now: now}, held)
	if diff := cmp.Diff([]schedtypes.UnitKey{"a-new"}, keys(v)); diff != "" || !v.Reclaim {
		t.Errorf("victims (-want +got): %s (reclaim %v)", diff, v.Reclaim)
	}
	// Asking for 3: a-new, then a still borrows most (2 above its min
	// against c's 1): a-mid.
	v = NewVictimSelector(tr).Select(Preemption{Quota: "b", Request: schedtypes.Resources{"cpu": 3000}, Reclaim: true, Now: now}, held)
	if diff := cmp.Diff([]schedtypes.UnitKey{"a-new", "a-mid"}, keys(v)); diff != "" {
		t.Errorf("victims for 3 CPUs (-want +got): %s", diff)
	}
}

// The selector keeps nothing of its own: the choice it simulates on the
// tree, the look-ahead to the end of protection periods included, is undone,
// and a second selector on the same tree answers the same.
func TestVictimSelectorLeavesTheTreeAsItWas(t *testing.T) {
	tr := twoLevel(t)
	held := map[schedtypes.QuotaName][]schedtypes.Holding{
		"a": {holding("young", "a", 0, time.Minute, 5), holding("old", "a", 0, time.Hour, 5)},
	}
	chargeAll(tr, held)
	before := tr.List()
	p := Preemption{Quota: "b", Request: schedtypes.Resources{"cpu": 5000}, Reclaim: true, Protection: 2 * time.Hour, Now: now}
	v := NewVictimSelector(tr).Select(p, held)
	if len(v.Units) != 0 || len(v.Protected) == 0 || v.FreeAt.IsZero() {
		t.Fatalf("victims %+v; want none now, and the protected ones with when they are free", v)
	}
	if diff := cmp.Diff(before, tr.List()); diff != "" {
		t.Errorf("the tree changed by a selection (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(v, NewVictimSelector(tr).Select(p, held)); diff != "" {
		t.Errorf("a second selector answers differently (-first +second):\n%s", diff)
	}
}

// A search told which units are on their way out answers as one that
// finds them in held itself, over many random worlds.
func TestSearchToldWhoIsEvictingAnswersAlike(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 2))
	for world := range 300 {
		tr := twoLevel(t)
		held := map[schedtypes.QuotaName][]schedtypes.Holding{}
		var evicting []schedtypes.Holding
		for i := range rng.IntN(8) {
			q := []schedtypes.QuotaName{"a", "b"}[rng.IntN(2)]
			h := holding(schedtypes.UnitKey(fmt.Sprintf("u%d", i)), q, int32(rng.IntN(3)), time.Duration(rng.IntN(10))*time.Minute, 1+rng.Int64N(3))
			h.Evicting = rng.IntN(3) == 0
			if h.Evicting {
				evicting = append(evicting, h)
			}
			held[q] = append(held[q], h)
		}
		chargeAll(tr, held)
		p := Preemption{Quota: []schedtypes.QuotaName{"a", "b"}[rng.IntN(2)], Request: schedtypes.Resources{"cpu": (1 + rng.Int64N(6)) * 1000},
			Priority: int32(rng.IntN(3)), Preempt: rng.IntN(2) == 0, Reclaim: rng.IntN(2) == 0, Protection: time.Duration(rng.IntN(2)) * 5 * time.Minute, Now: now}
		if rng.IntN(4) == 0 && len(held["a"]) > 0 {
			left := held["a"][0].Key
			p.Leave = func(k schedtypes.UnitKey) bool { return k == left }
		}
		walked := NewVictimSelector(tr).Select(p, held)
		p.Evicting, p.EvictingKnown = evicting, true
		told := NewVictimSelector(tr).Select(p, held)
		if diff := cmp.Diff(walked, told); diff != "" {
			t.Fatalf("world %d: told who is evicting, the search answers otherwise (-walked +told):\n%s", world, diff)
		}
	}
}
