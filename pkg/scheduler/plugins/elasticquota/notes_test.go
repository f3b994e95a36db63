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

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// The queues keep a unit refused for want of room waiting until what the
// plugin tells them could answer it: each change to what units hold, and
// the room each gives back, in its amount.
func TestChangesToHoldingsAreTold(t *testing.T) {
	p, h := newTestPlugin(t, &configv1.ElasticQuotaArgs{ReclaimProtectionPeriod: &metav1.Duration{}},
		utiltesting.MakeElasticQuota("org").IsParent(true).Max(corev1.ResourceCPU, "10").Obj(),
		utiltesting.MakeElasticQuota("team-a").Parent("org").Min(corev1.ResourceCPU, "1").Max(corev1.ResourceCPU, "10").Obj(),
		utiltesting.MakeElasticQuota("team-b").Parent("org").Min(corev1.ResourceCPU, "1").Max(corev1.ResourceCPU, "10").Obj())
	ctx := context.Background()
	step := func(what string, do func(), wantRoom []roomFreed, wantHoldings []holdingsChanged) {
		t.Helper()
		do()
		room, holdings := h.takeNotes()
		if diff := cmp.Diff(wantRoom, room, cmp.AllowUnexported(roomFreed{})); diff != "" {
			t.Errorf("%s: room given back (-want +got):\n%s", what, diff)
		}
		if diff := cmp.Diff(wantHoldings, holdings, cmp.AllowUnexported(holdingsChanged{})); diff != "" {
			t.Errorf("%s: holdings changed (-want +got):\n%s", what, diff)
		}
	}
	a1 := unit("a1", "team-a", 3, 4)
	at := h.clock.Now()
	step("a1 reserved", func() {
		if st := p.Reserve(ctx, a1); !st.IsSuccess() {
			t.Fatalf("reserve: %v", st.Message)
		}
	}, nil, []holdingsChanged{{"team-a", 3, false}})
	step("a1 read back from the API with its own time of admission", func() { p.SetUsage(a1.Key, holding(a1, at.Add(time.Second))) }, nil, nil)
	step("a1 read back unchanged", func() { p.SetUsage(a1.Key, holding(a1, at.Add(time.Second))) }, nil, nil)
	shrunk := holding(a1, at.Add(time.Second))
	shrunk.Used = cpu(1)
	step("a1 shrank from 4 to 1 cpu", func() { p.SetUsage(a1.Key, shrunk) },
		[]roomFreed{{"org", cpu(3)}}, []holdingsChanged{{"team-a", 0, true}})
	lower := *shrunk
	lower.Priority = 1
	step("a1's priority fell to 1 (a victim for more units)", func() { p.SetUsage(a1.Key, &lower) },
		nil, []holdingsChanged{{"team-a", 1, false}})
	moved := lower
	moved.Quota = "team-b"
	step("a1 moved to team-b", func() { p.SetUsage(a1.Key, &moved) },
		[]roomFreed{{"org", cpu(1)}}, []holdingsChanged{{"team-a", 0, true}, {"team-b", 1, false}})
	step("a1 gone", func() { p.SetUsage(a1.Key, nil) },
		[]roomFreed{{"org", cpu(1)}}, []holdingsChanged{{"team-b", 0, true}})
	b1 := unit("b1", "team-b", 2, 2)
	step("b1 reserved", func() { p.Reserve(ctx, b1) }, nil, []holdingsChanged{{"team-b", 2, false}})
	step("b1 unreserved", func() { p.Unreserve(ctx, b1) }, []roomFreed{{"org", cpu(2)}}, []holdingsChanged{{"team-b", 0, true}})
}

// The Lack of a refusal is what its shortage misses, and only for a unit
// that cannot reclaim: reclaim waits on what others borrow, which no room
// given back counts.
func TestRefusalLacksWhatItsShortageMisses(t *testing.T) {
	p, h := newTestPlugin(t, &configv1.ElasticQuotaArgs{ReclaimProtectionPeriod: &metav1.Duration{}},
		utiltesting.MakeElasticQuota("org").IsParent(true).Max(corev1.ResourceCPU, "10").Obj(),
		utiltesting.MakeElasticQuota("team-a").Parent("org").Min(corev1.ResourceCPU, "4").Max(corev1.ResourceCPU, "10").Obj(),
		utiltesting.MakeElasticQuota("team-b").Parent("org").Min(corev1.ResourceCPU, "1").Max(corev1.ResourceCPU, "10").Obj())
	b1 := unit("b1", "team-b", 1, 8)
	p.SetUsage(b1.Key, holding(b1, h.clock.Now()))
	// 2 cpu free in org. team-a uses nothing of its min of 4. Every
	// shortage below is org's, the top of the cohort, and no quota keeps
	// its min from others: the lacks are at the root.
	big := unit("big", "team-a", 1, 7)
	want := &schedtypes.Lack{Resource: corev1.ResourceCPU, Amount: 5000, Root: true}
	if diff := cmp.Diff(want, p.RefusalMark(big, false, false).Lack); diff != "" {
		t.Errorf("lack of a 7-cpu unit with 2 free, no reclaim (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, p.RefusalMark(big, false, true).Lack); diff != "" {
		t.Errorf("lack of a 7-cpu unit beyond its quota's min of 4, which may not reclaim (-want +got):\n%s", diff)
	}
	small := unit("small", "team-a", 1, 3)
	if st := p.Filter(context.Background(), small); st.IsSuccess() {
		t.Fatal("a 3-cpu unit fits in 2 free")
	}
	if got := p.RefusalMark(small, false, true).Lack; got != nil {
		t.Errorf("lack %+v of a unit within its quota's min that may reclaim, want none", got)
	}
	if diff := cmp.Diff(&schedtypes.Lack{Resource: corev1.ResourceCPU, Amount: 1000, Root: true}, p.RefusalMark(small, false, false).Lack); diff != "" {
		t.Errorf("lack of a 3-cpu unit with 2 free, no reclaim (-want +got):\n%s", diff)
	}
	// A confirmation gives the lack of now.
	reason := p.Filter(context.Background(), big).Reason
	mark := p.RefusalMark(big, false, false)
	b1less := holding(b1, h.clock.Now())
	b1less.Used = cpu(6)
	p.SetUsage(b1.Key, b1less)
	again := p.StillRefused(big, mark, reason, false)
	if again == nil {
		t.Fatal("not confirmed after a change in team-b only, with 4 free of the 7 it asks")
	}
	if diff := cmp.Diff(&schedtypes.Lack{Resource: corev1.ResourceCPU, Amount: 3000, Root: true}, again.Lack); diff != "" {
		t.Errorf("lack confirmed with 4 free (-want +got):\n%s", diff)
	}
}

// A lack is at the root only where the cohort's top refused the unit and
// room there is its max less its usage: not at a quota of its own, nor
// while some quota keeps its unused min from the others.
func TestLackIsAtTheRootOnlyWhereTheTopRefusedAlone(t *testing.T) {
	p, h := newTestPlugin(t, &configv1.ElasticQuotaArgs{ReclaimProtectionPeriod: &metav1.Duration{}},
		utiltesting.MakeElasticQuota("org").IsParent(true).Max(corev1.ResourceCPU, "10").Obj(),
		utiltesting.MakeElasticQuota("team-a").Parent("org").Min(corev1.ResourceCPU, "1").Max(corev1.ResourceCPU, "5").Obj(),
		utiltesting.MakeElasticQuota("team-b").Parent("org").Min(corev1.ResourceCPU, "1").Max(corev1.ResourceCPU, "10").Obj())
	a1 := unit("a1", "team-a", 1, 3)
	p.SetUsage(a1.Key, holding(a1, h.clock.Now()))
	// team-a has 2 of its max of 5 free, org 7: team-a refuses a 3-cpu unit.
	u := unit("u", "team-a", 1, 3)
	if diff := cmp.Diff(&schedtypes.Lack{Resource: corev1.ResourceCPU, Amount: 1000}, p.RefusalMark(u, false, false).Lack); diff != "" {
		t.Errorf("lack of a unit its own quota refuses (-want +got):\n%s", diff)
	}

	// team-b keeps its unused min: org's room for team-a is its max less
	// its usage and less team-b's unused min of 1, which a charge in team-b
	// takes without taking any of team-a's room.
	p2, h2 := newTestPlugin(t, &configv1.ElasticQuotaArgs{ReclaimProtectionPeriod: &metav1.Duration{}},
		utiltesting.MakeElasticQuota("org").IsParent(true).Max(corev1.ResourceCPU, "10").Obj(),
		utiltesting.MakeElasticQuota("team-a").Parent("org").Min(corev1.ResourceCPU, "1").Max(corev1.ResourceCPU, "10").Obj(),
		utiltesting.MakeElasticQuota("team-b").Parent("org").Min(corev1.ResourceCPU, "1").Max(corev1.ResourceCPU, "10").
			Label(eqv1alpha1.AllowLentResourceLabel, "false").Obj())
	a2 := unit("a2", "team-a", 1, 8)
	p2.SetUsage(a2.Key, holding(a2, h2.clock.Now()))
	// org: 8 used, 1 kept for team-b, 1 free for team-a.
	if diff := cmp.Diff(&schedtypes.Lack{Resource: corev1.ResourceCPU, Amount: 1000}, p2.RefusalMark(unit("v", "team-a", 1, 2), false, false).Lack); diff != "" {
		t.Errorf("lack at org beside a quota that keeps its min (-want +got):\n%s", diff)
	}
}

// A unit that may preempt lacks only what its victims cannot give back, and
// its refusal is not confirmed once the room it misses is no more than they
// hold: a victim search could succeed then, though its quota is unchanged.
func TestPreemptorLacksWhatItsVictimsCannotGiveBack(t *testing.T) {
	p, h := newTestPlugin(t, &configv1.ElasticQuotaArgs{ReclaimProtectionPeriod: &metav1.Duration{}},
		utiltesting.MakeElasticQuota("org").IsParent(true).Max(corev1.ResourceCPU, "10").Obj(),
		utiltesting.MakeElasticQuota("team-a").Parent("org").Min(corev1.ResourceCPU, "1").Max(corev1.ResourceCPU, "10").Obj(),
		utiltesting.MakeElasticQuota("team-b").Parent("org").Min(corev1.ResourceCPU, "1").Max(corev1.ResourceCPU, "10").Obj())
	low, same := unit("low", "team-a", 1, 2), unit("same", "team-a", 5, 1)
	b1 := unit("b1", "team-b", 1, 7)
	for _, u := range []*framework.UnitInfo{low, same, b1} {
		p.SetUsage(u.Key, holding(u, h.clock.Now()))
	}
	// 0 cpu free in org; big misses 6, low (priority 1) holds 2 of them,
	// same (priority 5, as big) none.
	big := unit("big", "team-a", 5, 6)
	reason := p.Filter(context.Background(), big).Reason
	mark := p.RefusalMark(big, true, false)
	if diff := cmp.Diff(&schedtypes.Lack{Resource: corev1.ResourceCPU, Amount: 4000, Root: true}, mark.Lack); diff != "" {
		t.Errorf("lack of a preemptor missing 6 cpu beside 2 of lower priority (-want +got):\n%s", diff)
	}
	// team-b gives back 3: big misses 3, still more than low's 2.
	less := holding(b1, h.clock.Now())
	less.Used = cpu(4)
	p.SetUsage(b1.Key, less)
	again := p.StillRefused(big, mark, reason, false)
	if again == nil {
		t.Fatal("not confirmed missing 3 cpu beside 2 of lower priority")
	}
	if diff := cmp.Diff(&schedtypes.Lack{Resource: corev1.ResourceCPU, Amount: 1000, Root: true}, again.Lack); diff != "" {
		t.Errorf("lack confirmed (-want +got):\n%s", diff)
	}
	// One more: big misses 2, which low holds.
	less.Used = cpu(3)
	p.SetUsage(b1.Key, less)
	if got := p.StillRefused(big, again, reason, false); got != nil {
		t.Errorf("confirmed (lack %+v) missing 2 cpu that a unit of lower priority holds", got.Lack)
	}
	if got := p.RefusalMark(big, true, false).Lack; got != nil {
		t.Errorf("lack %+v when its victims hold all it misses, want none", got)
	}
	// A queue that does not preempt lacks it all.
	if diff := cmp.Diff(&schedtypes.Lack{Resource: corev1.ResourceCPU, Amount: 2000, Root: true}, p.RefusalMark(big, false, false).Lack); diff != "" {
		t.Errorf("lack without preemption (-want +got):\n%s", diff)
	}
}
