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

package elasticquota

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// seen returns a skip function that records which units the search looked
// at as candidates, and leaves each of them out.
func seen(keys *[]schedtypes.UnitKey) func(schedtypes.UnitKey) bool {
	return func(k schedtypes.UnitKey) bool {
		*keys = append(*keys, k)
		return true
	}
}

// searchedKeys are the units of the holdings kept for the victim searches
// of quota q's cohort.
func searchedKeys(p *Plugin, q schedtypes.QuotaName) []schedtypes.UnitKey {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []schedtypes.UnitKey
	for _, hs := range p.cohortHoldingsLocked(p.tree.Cohort(q)) {
		for _, h := range hs {
			out = append(out, h.Key)
		}
	}
	return sortedKeys(out)
}

// A victim search looks at the holdings of its cohort only, and at all of
// them.
func TestVictimSearchLooksAtItsCohortOnly(t *testing.T) {
	quotas := append(twoTeams(),
		utiltesting.MakeElasticQuota("org2").IsParent(true).Max(corev1.ResourceCPU, "6").Obj(),
		utiltesting.MakeElasticQuota("team-c").Parent("org2").Max(corev1.ResourceCPU, "6").Obj())
	p, h := newTestPlugin(t, &configv1.ElasticQuotaArgs{ReclaimProtectionPeriod: &metav1.Duration{}}, quotas...)
	for _, u := range []struct {
		name  string
		quota schedtypes.QuotaName
	}{{"a1", "team-a"}, {"b1", "team-b"}, {"c1", "team-c"}} {
		x := unit(u.name, u.quota, 5, 2)
		p.SetUsage(x.Key, holding(x, h.clock.Now()))
	}
	p.Preempt(context.Background(), unit("new", "team-a", 5, 4), true, true, nil)
	want := []schedtypes.UnitKey{"default/a1", "default/b1"}
	if diff := cmp.Diff(want, searchedKeys(p, "team-a")); diff != "" {
		t.Errorf("candidates looked at (-want +got):\n%s", diff)
	}
}

// Recording what a unit holds again, unchanged, keeps a fruitless search
// true; any change a search could see repeats it.
func TestFruitlessSearchSurvivesUnchangedUsage(t *testing.T) {
	p, h := newTestPlugin(t, &configv1.ElasticQuotaArgs{ReclaimProtectionPeriod: &metav1.Duration{}},
		utiltesting.MakeElasticQuota("q").Max(corev1.ResourceCPU, "4").Obj())
	holder := unit("holder", "q", 5, 4)
	held := holding(holder, h.clock.Now())
	p.SetUsage(holder.Key, held)
	search := func() int {
		var keys []schedtypes.UnitKey
		if v := p.Preempt(context.Background(), unit("high", "q", 10, 4), true, false, seen(&keys)); len(v.Units) != 0 {
			t.Fatalf("a unit left out was chosen: %+v", v)
		}
		return len(keys)
	}
	if n := search(); n != 1 {
		t.Fatalf("first search looked at %d candidates, want 1", n)
	}
	again := *held
	p.SetUsage(holder.Key, &again)
	if n := search(); n != 0 {
		t.Errorf("after an unchanged usage the search ran again (%d candidates)", n)
	}
	for name, change := range map[string]func(h *schedtypes.Holding){
		"evicting":   func(h *schedtypes.Holding) { h.Evicting = true },
		"priority":   func(h *schedtypes.Holding) { h.Priority = 6 },
		"admitted":   func(h *schedtypes.Holding) { h.AllocatedAt = h.AllocatedAt.Add(1) },
		"less usage": func(h *schedtypes.Holding) { h.Used = cpu(3) },
	} {
		changed := *held
		changed.Used = held.Used.Clone()
		change(&changed)
		p.SetUsage(holder.Key, &changed)
		if n := search(); n != 1 {
			t.Errorf("after a change (%s) the search looked at %d candidates, want 1", name, n)
		}
		p.SetUsage(holder.Key, held)
		search()
	}
}

func sortedKeys(keys []schedtypes.UnitKey) []schedtypes.UnitKey {
	out := append([]schedtypes.UnitKey(nil), keys...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// The holdings kept for the searches of a cohort follow what units hold and
// the shape of the tree.
func TestVictimSearchFollowsHoldingsAndTree(t *testing.T) {
	quotas := append(twoTeams(),
		utiltesting.MakeElasticQuota("org2").IsParent(true).Max(corev1.ResourceCPU, "6").Obj(),
		utiltesting.MakeElasticQuota("team-c").Parent("org2").Max(corev1.ResourceCPU, "6").Obj())
	p, h := newTestPlugin(t, &configv1.ElasticQuotaArgs{ReclaimProtectionPeriod: &metav1.Duration{}}, quotas...)
	look := func() []schedtypes.UnitKey {
		// Past the memory of a fruitless search, so each one searches.
		h.clock.Step(2 * noVictimsTTL)
		p.Preempt(context.Background(), unit("new", "team-a", 9, 4), true, true, nil)
		return searchedKeys(p, "team-a")
	}
	a1, b1, c1 := unit("a1", "team-a", 1, 1), unit("b1", "team-b", 1, 1), unit("c1", "team-c", 1, 1)
	p.SetUsage(a1.Key, holding(a1, h.clock.Now()))
	look()
	p.SetUsage(b1.Key, holding(b1, h.clock.Now()))
	p.SetUsage(c1.Key, holding(c1, h.clock.Now()))
	if diff := cmp.Diff([]schedtypes.UnitKey{"default/a1", "default/b1"}, look()); diff != "" {
		t.Errorf("after b1 and c1 came (-want +got):\n%s", diff)
	}
	p.SetUsage(a1.Key, nil)
	if diff := cmp.Diff([]schedtypes.UnitKey{"default/b1"}, look()); diff != "" {
		t.Errorf("after a1 left (-want +got):\n%s", diff)
	}
	// team-c moves under org: its holdings join the cohort.
	p.follow.onQuota(utiltesting.MakeElasticQuota("team-c").Parent("org").Max(corev1.ResourceCPU, "6").Obj())
	if diff := cmp.Diff([]schedtypes.UnitKey{"default/b1", "default/c1"}, look()); diff != "" {
		t.Errorf("after team-c moved under org (-want +got):\n%s", diff)
	}
}

// A refusal for want of room with nobody to evict is confirmed while its
// request still does not fit for the same reason and nothing held in its
// own quota changed; room freed, or a change in its quota (a new victim
// could be there), sends it to a full try.
func TestRefusalIsConfirmedUntilItsQuotaOrRoomChanges(t *testing.T) {
	// Room runs out in org, and stays the shortage whatever team-a holds.
	p, h := newTestPlugin(t, &configv1.ElasticQuotaArgs{ReclaimProtectionPeriod: &metav1.Duration{}},
		utiltesting.MakeElasticQuota("org").IsParent(true).Max(corev1.ResourceCPU, "6").Obj(),
		utiltesting.MakeElasticQuota("team-a").Parent("org").Min(corev1.ResourceCPU, "1").Max(corev1.ResourceCPU, "6").Obj(),
		utiltesting.MakeElasticQuota("team-b").Parent("org").Min(corev1.ResourceCPU, "1").Max(corev1.ResourceCPU, "6").Obj())
	a1, b1 := unit("a1", "team-a", 9, 2), unit("b1", "team-b", 5, 4)
	p.SetUsage(a1.Key, holding(a1, h.clock.Now()))
	p.SetUsage(b1.Key, holding(b1, h.clock.Now()))
	big := unit("big", "team-a", 9, 2)
	if st := p.Filter(context.Background(), big); st.IsSuccess() {
		t.Fatal("big fits; want it refused for want of room in org")
	}
	if v := p.Preempt(context.Background(), big, true, true, nil); len(v.Units) != 0 || v.Waiting || v.Partial {
		t.Fatalf("victims %+v, want none: nobody below priority 9 in team-a, team-a not within its min", v)
	}
	reason := p.Filter(context.Background(), big).Reason
	mark := p.RefusalMark(big, false, true)
	if p.StillRefused(big, mark, reason, true) == nil {
		t.Fatal("not confirmed with nothing changed")
	}
	// Another quota's holdings changing does not touch team-a's victims.
	moved := *holding(b1, h.clock.Now().Add(time.Second))
	p.SetUsage(b1.Key, &moved)
	if p.StillRefused(big, mark, reason, true) == nil {
		t.Error("not confirmed after a change in team-b only")
	}
	if p.StillRefused(big, mark, reason, false) == nil {
		t.Error("not confirmed without reclaim")
	}
	if other := unit("big", "team-a", 8, 2); p.StillRefused(other, mark, reason, true) != nil {
		t.Error("confirmed for another priority")
	}
	// A lower unit admitted in team-a is a victim the mark has not seen;
	// the shortage is still org's.
	low := unit("low", "team-a", 1, 1)
	p.SetUsage(low.Key, holding(low, h.clock.Now()))
	if got := p.Filter(context.Background(), big).Reason; got != reason {
		t.Fatalf("refused for %v after low came, want %v as before", got, reason)
	}
	if p.StillRefused(big, mark, reason, true) != nil {
		t.Error("confirmed after a unit of lower priority came to team-a")
	}
	p.SetUsage(low.Key, nil)
	mark = p.RefusalMark(big, false, true)
	if p.StillRefused(big, mark, reason, true) == nil {
		t.Fatal("not confirmed under a fresh mark")
	}
	// Room freed in team-b lets it fit.
	smaller := *holding(b1, h.clock.Now())
	smaller.Used = cpu(2)
	p.SetUsage(b1.Key, &smaller)
	if p.StillRefused(big, mark, reason, true) != nil {
		t.Error("confirmed although it fits now")
	}
}

// The holdings kept for a cohort's searches are what a fresh listing of the
// charges gives, after any run of changes (new holders, releases, moves
// between quotas, a same charge with a new consumer), and a change in one
// quota builds that quota's list again, not the others'.
func TestCohortHoldingsAreRebuiltByQuota(t *testing.T) {
	p, h := newTestPlugin(t, &configv1.ElasticQuotaArgs{ReclaimProtectionPeriod: &metav1.Duration{}}, twoTeams()...)
	// fresh lists p.charged by quota, as a search must see it.
	fresh := func() map[schedtypes.QuotaName][]schedtypes.UnitKey {
		out := map[schedtypes.QuotaName][]schedtypes.UnitKey{}
		for key, c := range p.charged {
			out[c.Quota] = append(out[c.Quota], key)
		}
		for q := range out {
			out[q] = sortedKeys(out[q])
		}
		return out
	}
	// kept is the cohort's kept lists, and the first element of each, by
	// which a list built again is told from one kept.
	kept := func() (map[schedtypes.QuotaName][]schedtypes.UnitKey, map[schedtypes.QuotaName]*schedtypes.Holding) {
		p.mu.Lock()
		defer p.mu.Unlock()
		out, first := map[schedtypes.QuotaName][]schedtypes.UnitKey{}, map[schedtypes.QuotaName]*schedtypes.Holding{}
		for q, hs := range p.cohortHoldingsLocked("org") {
			for _, x := range hs {
				out[q] = append(out[q], x.Key)
			}
			out[q] = sortedKeys(out[q])
			first[q] = &hs[0]
		}
		return out, first
	}
	set := func(name string, q schedtypes.QuotaName, priority int32, n int64, consumer string) {
		x := holding(unit(name, q, priority, n), h.clock.Now())
		x.Consumer = types.UID(consumer)
		p.SetUsage(x.Key, x)
	}
	check := func(step string) map[schedtypes.QuotaName]*schedtypes.Holding {
		t.Helper()
		got, first := kept()
		if diff := cmp.Diff(fresh(), got); diff != "" {
			t.Fatalf("after %s, kept holdings (-fresh +kept):\n%s", step, diff)
		}
		var want, evicting []schedtypes.UnitKey
		for key, c := range p.charged {
			if c.Evicting {
				want = append(want, key)
			}
		}
		p.mu.Lock()
		for _, x := range p.cohortEvictingLocked("org") {
			evicting = append(evicting, x.Key)
		}
		p.mu.Unlock()
		if diff := cmp.Diff(sortedKeys(want), sortedKeys(evicting)); diff != "" {
			t.Fatalf("after %s, kept units on their way out (-charged +kept):\n%s", step, diff)
		}
		return first
	}
	set("a1", "team-a", 1, 1, "")
	set("a2", "team-a", 1, 1, "")
	set("b1", "team-b", 1, 1, "")
	before := check("three holders")
	// A change in team-b only: team-a's list is the one kept.
	set("b2", "team-b", 2, 1, "")
	after := check("b2 came")
	if after["team-a"] != before["team-a"] {
		t.Error("team-a's list was built again after a change in team-b only")
	}
	if after["team-b"] == before["team-b"] {
		t.Error("team-b's list was kept after b2 came to team-b")
	}
	// a2 moves to team-b: both lists change.
	set("a2", "team-b", 1, 1, "")
	check("a2 moved to team-b")
	// b2 is chosen as a victim, then a1; b2 gives its quota back.
	for _, name := range []string{"b2", "a1"} {
		c := p.charged[unit(name, "", 0, 0).Key]
		c.Evicting = true
		p.SetUsage(c.Key, &c)
		check(name + " is evicting")
	}
	p.SetUsage(unit("b2", "team-b", 1, 1).Key, nil)
	check("b2 left")
	// The same charge with a consumer: searches do not see it as a change,
	// but the next list built carries it.
	set("b1", "team-b", 1, 1, "job-b1")
	p.SetUsage(unit("a1", "team-a", 1, 1).Key, nil)
	check("a1 left")
	p.mu.Lock()
	for _, x := range p.cohortHoldingsLocked("org")["team-b"] {
		if x.Key == "default/b1" && x.Consumer != "job-b1" {
			t.Errorf("b1's kept consumer is %q, want job-b1", x.Consumer)
		}
	}
	p.mu.Unlock()
	p.SetUsage(unit("b1", "team-b", 1, 1).Key, nil)
	p.SetUsage(unit("a2", "team-b", 1, 1).Key, nil)
	if got, _ := kept(); len(got) != 0 {
		t.Errorf("kept holdings after every holder left: %v", got)
	}
}

// What units below a priority hold at or below a quota is the sum of their
// charges there, for a leaf as for the cohort's top, but for the asking
// unit's own.
func TestLowerHeldUnderAQuota(t *testing.T) {
	p, h := newTestPlugin(t, &configv1.ElasticQuotaArgs{ReclaimProtectionPeriod: &metav1.Duration{}}, twoTeams()...)
	for _, x := range []*framework.UnitInfo{unit("a1", "team-a", 1, 1), unit("a2", "team-a", 3, 2), unit("b1", "team-b", 1, 1), unit("b2", "team-b", 5, 1)} {
		p.SetUsage(x.Key, holding(x, h.clock.Now()))
	}
	for _, tc := range []struct {
		under    schedtypes.QuotaName
		priority int32
		self     string
		want     int64
	}{
		{"team-a", 2, "new", 1}, {"team-a", 4, "new", 3}, {"team-a", 4, "a2", 1}, {"team-b", 9, "new", 2},
		{"org", 2, "new", 2}, {"org", 4, "new", 4}, {"org", 9, "a1", 4},
	} {
		p.mu.Lock()
		p.cohortHoldingsLocked("org")
		got := p.lowerUnderLocked("org", tc.under, tc.priority, schedtypes.NewUnitKey("default", tc.self))
		p.mu.Unlock()
		if got[corev1.ResourceCPU] != tc.want*1000 {
			t.Errorf("below priority %d under %s but %s: %v, want %d CPU", tc.priority, tc.under, tc.self, got, tc.want)
		}
	}
}
