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
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

func res(pairs ...string) schedtypes.Resources {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		l[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return schedtypes.FromList(l)
}

// depth3 builds root <- org (max cpu 10) <- team (max cpu 6, memory 8Gi) <- leaf (max cpu 4).
func depth3(t *testing.T, oversell float64) *Tree {
	t.Helper()
	tr := New(oversell)
	for _, s := range []Spec{
		{Name: "leaf", Parent: "team", Max: res("cpu", "4")},
		{Name: "team", Parent: "org", Max: res("cpu", "6", "memory", "8Gi")},
		{Name: "org", Max: res("cpu", "10")},
		{Name: "other", Parent: "team", Max: res("cpu", "6")},
	} {
		if err := tr.Upsert(s); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name     string
		oversell float64
		charge   map[schedtypes.QuotaName]schedtypes.Resources
		quota    schedtypes.QuotaName
		req      schedtypes.Resources
		want     *Shortage
	}{
		{name: "fits empty tree", quota: "leaf", req: res("cpu", "4")},
		{name: "leaf max", quota: "leaf", req: res("cpu", "4500m"),
			want: &Shortage{Quota: "leaf", Resource: "cpu", Requested: 4500, Limit: 4000, NeverFits: true}},
		{name: "parent full", quota: "leaf", charge: map[schedtypes.QuotaName]schedtypes.Resources{"other": res("cpu", "3")}, req: res("cpu", "3500m"),
			want: &Shortage{Quota: "team", For: "leaf", Resource: "cpu", Requested: 3500, Used: 3000, Limit: 6000}},
		{name: "milli cpu exactly fits", quota: "leaf", charge: map[schedtypes.QuotaName]schedtypes.Resources{"leaf": res("cpu", "1500m")}, req: res("cpu", "2500m")},
		{name: "milli cpu one milli over", quota: "leaf", charge: map[schedtypes.QuotaName]schedtypes.Resources{"leaf": res("cpu", "1501m")}, req: res("cpu", "2500m"),
			want: &Shortage{Quota: "leaf", For: "leaf", Resource: "cpu", Requested: 2500, Used: 1501, Limit: 4000}},
		{name: "resource missing from max is unlimited at that level", quota: "leaf", req: res("cpu", "1", "nvidia.com/gpu", "100")},
		{name: "memory limited only at team", quota: "leaf", charge: map[schedtypes.QuotaName]schedtypes.Resources{"other": res("memory", "6Gi")}, req: res("memory", "3Gi"),
			want: &Shortage{Quota: "team", For: "leaf", Resource: "memory", Requested: 3 << 30, Used: 6 << 30, Limit: 8 << 30}},
		{name: "oversell raises every max", oversell: 1.5, quota: "leaf", req: res("cpu", "6")},
		{name: "oversell still bounded", oversell: 1.5, quota: "leaf", req: res("cpu", "6001m"),
			want: &Shortage{Quota: "leaf", Resource: "cpu", Requested: 6001, Limit: 6000, NeverFits: true}},
		{name: "never fits reported before waiting", quota: "leaf", charge: map[schedtypes.QuotaName]schedtypes.Resources{"leaf": res("cpu", "4")}, req: res("cpu", "7", "memory", "1"),
			want: &Shortage{Quota: "leaf", Resource: "cpu", Requested: 7000, Limit: 4000, NeverFits: true}},
		{name: "unknown quota", quota: "nope", req: res("cpu", "1"), want: &Shortage{Quota: "nope", NotFound: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.oversell
			if o == 0 {
				o = 1
			}
			tr := depth3(t, o)
			for q, r := range tc.charge {
				tr.Charge(q, r)
			}
			got := tr.Check(tc.quota, tc.req)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Check (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChargeReleaseAlongPath(t *testing.T) {
	tr := depth3(t, 1)
	tr.Charge("leaf", res("cpu", "2", "memory", "1Gi"))
	tr.Charge("other", res("cpu", "1"))
	for name, want := range map[schedtypes.QuotaName]schedtypes.Resources{
		"leaf": res("cpu", "2", "memory", "1Gi"), "other": res("cpu", "1"),
		"team": res("cpu", "3", "memory", "1Gi"), "org": res("cpu", "3", "memory", "1Gi"),
	} {
		got, _ := tr.Get(name)
		if !got.Used.Equal(want) {
			t.Errorf("%s used = %v, want %v", name, got.Used, want)
		}
	}
	tr.Release("leaf", res("cpu", "2", "memory", "1Gi"))
	tr.Release("other", res("cpu", "1"))
	for _, name := range []schedtypes.QuotaName{"leaf", "other", "team", "org"} {
		if got, _ := tr.Get(name); !got.Used.IsZero() {
			t.Errorf("%s used = %v after release, want zero", name, got.Used)
		}
	}
}

func TestReparentMovesUsage(t *testing.T) {
	tr := depth3(t, 1)
	tr.Charge("leaf", res("cpu", "2"))
	if err := tr.Upsert(Spec{Name: "leaf", Parent: "", Max: res("cpu", "4")}); err != nil {
		t.Fatal(err)
	}
	team, _ := tr.Get("team")
	org, _ := tr.Get("org")
	if !team.Used.IsZero() || !org.Used.IsZero() {
		t.Errorf("old ancestors keep usage: team %v org %v", team.Used, org.Used)
	}
	if got := tr.Cohort("leaf"); got != "leaf" {
		t.Errorf("cohort = %s, want leaf", got)
	}
}

func TestParentArrivesLater(t *testing.T) {
	tr := New(1)
	if err := tr.Upsert(Spec{Name: "child", Parent: "parent", Max: res("cpu", "10")}); err != nil {
		t.Fatal(err)
	}
	tr.Charge("child", res("cpu", "3"))
	// Units of a quota whose parent is missing wait: the parent's limits are unknown.
	s := tr.Check("child", res("cpu", "1"))
	if s == nil || s.Broken != "the parent parent of quota child does not exist" {
		t.Fatalf("missing parent admitted or misreported: %+v", s)
	}
	if err := tr.Upsert(Spec{Name: "parent", Max: res("cpu", "4")}); err != nil {
		t.Fatal(err)
	}
	s = tr.Check("child", res("cpu", "2"))
	if s == nil || s.Quota != "parent" {
		t.Fatalf("parent's max not applied to usage charged before it arrived: %+v", s)
	}
}

func TestCycleRefused(t *testing.T) {
	tr := New(1)
	_ = tr.Upsert(Spec{Name: "a", Parent: "b"})
	_ = tr.Upsert(Spec{Name: "b", Parent: "a"})
	if got := tr.Path("b"); len(got) > 2 {
		t.Fatalf("path %v", got)
	}
	if err := tr.Upsert(Spec{Name: "c", Parent: "c"}); err == nil {
		t.Error("self-parent accepted")
	}
	// Every quota on the cycle, and every quota below one, refuses its units.
	_ = tr.Upsert(Spec{Name: "leaf", Parent: "a", Max: res("cpu", "10")})
	for _, name := range []schedtypes.QuotaName{"a", "b", "c", "leaf"} {
		if s := tr.Check(name, res("cpu", "1")); s == nil || s.Broken == "" {
			t.Errorf("%s: %+v, want a broken-tree refusal", name, s)
		}
	}
	// Breaking the cycle on the other quota than the refused one re-links it.
	_ = tr.Upsert(Spec{Name: "a"})
	for _, name := range []schedtypes.QuotaName{"b", "leaf"} {
		if s := tr.Check(name, res("cpu", "1")); s != nil {
			t.Errorf("%s after the fix: %s", name, s.Message())
		}
	}
	// a is now the parent of b and leaf: no unit is admitted to it.
	if s := tr.Check("a", res("cpu", "1")); s == nil || !s.Parent {
		t.Errorf("a after the fix: %+v, want a parent-quota refusal", s)
	}
	if got := tr.Path("b"); len(got) != 2 || got[1] != "a" {
		t.Errorf("b's path after the fix = %v, want [b a]", got)
	}
}

func TestDeletedParentBreaksChildren(t *testing.T) {
	tr := New(1)
	_ = tr.Upsert(Spec{Name: "org", Max: res("cpu", "10")})
	_ = tr.Upsert(Spec{Name: "team", Parent: "org", Max: res("cpu", "10")})
	_ = tr.Upsert(Spec{Name: "leaf", Parent: "team", Max: res("cpu", "10")})
	if s := tr.Check("leaf", res("cpu", "1")); s != nil {
		t.Fatal(s.Message())
	}
	tr.Delete("org")
	s := tr.Check("leaf", res("cpu", "1"))
	if s == nil || s.Broken != "the parent org of quota team does not exist" {
		t.Fatalf("after the grandparent's deletion: %+v", s)
	}
	if v := NewVictimSelector(tr).Select(Preemption{Quota: "leaf", Request: res("cpu", "1"), Preempt: true, Reclaim: true, Priority: 10}, nil); len(v.Units) > 0 {
		t.Errorf("victims chosen for a broken tree: %+v", v)
	}
}

func TestDeleteKeepsUsage(t *testing.T) {
	tr := depth3(t, 1)
	tr.Charge("leaf", res("cpu", "1"))
	tr.Delete("leaf")
	if tr.Exists("leaf") {
		t.Error("deleted quota still exists")
	}
	if s := tr.Check("leaf", res("cpu", "1")); s == nil || !s.NotFound {
		t.Errorf("check on deleted quota = %+v, want NotFound", s)
	}
	tr.Release("leaf", res("cpu", "1"))
	if _, ok := tr.Get("leaf"); ok {
		t.Error("placeholder kept after its usage was released")
	}
}

func TestMessage(t *testing.T) {
	s := &Shortage{Quota: "team-a", Resource: "cpu", Requested: 4000, Used: 4000, Limit: 4000}
	want := "insufficient quota: quota team-a has 0 cpu free (used 4, min 0, max 4), the unit requests 4 cpu: 4 more cpu needed"
	if got := s.Message(); got != want {
		t.Errorf("message = %q\nwant        %q", got, want)
	}
}

// A short ancestor is named as such, with its own used, min and max.
func TestCheckNamesTheShortAncestor(t *testing.T) {
	tr := New(1)
	_ = tr.Upsert(Spec{Name: "org", Min: res("cpu", "3"), Max: res("cpu", "8")})
	_ = tr.Upsert(Spec{Name: "team", Parent: "org", Min: res("cpu", "2"), Max: res("cpu", "10")})
	_ = tr.Upsert(Spec{Name: "other", Parent: "org", Max: res("cpu", "10")})
	tr.Charge("other", res("cpu", "6500m"))
	s := tr.Check("team", res("cpu", "2"))
	if s == nil {
		t.Fatal("2 cpu fit although org has only 1.5 free")
	}
	want := "insufficient quota: quota org, an ancestor of quota team, has 1500m cpu free (used 6500m, min 3, max 8), the unit requests 2 cpu: 500m more cpu needed"
	if got := s.Message(); got != want {
		t.Errorf("message = %q\nwant        %q", got, want)
	}
	if got := s.Reason().String(); got != "short/org/cpu" {
		t.Errorf("key = %q, want short/org/cpu", got)
	}
}

// FuzzUsage checks that after any sequence of charges, releases and moves,
// every quota's usage equals what was charged in its subtree.
func FuzzUsage(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Fuzz(func(t *testing.T, ops []byte) {
		names := []schedtypes.QuotaName{"a", "b", "c", "d"}
		tr := New(1)
		charged := map[schedtypes.QuotaName]int64{}
		parents := map[schedtypes.QuotaName]schedtypes.QuotaName{}
		for i := 0; i+1 < len(ops); i += 2 {
			n := names[int(ops[i]>>4)%len(names)]
			m := names[int(ops[i]&0xf)%len(names)]
			amt := int64(ops[i+1]%8) + 1
			switch ops[i+1] % 3 {
			case 0:
				tr.Charge(n, schedtypes.Resources{"cpu": amt})
				charged[n] += amt
			case 1:
				if charged[n] >= amt {
					tr.Release(n, schedtypes.Resources{"cpu": amt})
					charged[n] -= amt
				}
			case 2:
				if tr.Upsert(Spec{Name: n, Parent: m}) == nil {
					parents[n] = m
				}
			}
		}
		for _, n := range names {
			info, ok := tr.Get(n)
			if !ok {
				continue
			}
			var want int64
			for _, leaf := range names {
				for _, p := range tr.Path(leaf) {
					if p == n {
						want += charged[leaf]
					}
				}
			}
			if info.Used["cpu"] != want {
				t.Fatalf("%s used %d, want %d (parents %v)", n, info.Used["cpu"], want, parents)
			}
		}
	})
}

// A quota that does not lend its min keeps it: siblings borrow only the
// rest of the parent, and its own units get their min at once.
func TestNoLendKeepsUnusedMin(t *testing.T) {
	tr := New(1)
	_ = tr.Upsert(Spec{Name: "parent", Max: res("cpu", "10")})
	_ = tr.Upsert(Spec{Name: "keeper", Parent: "parent", Min: res("cpu", "6"), Max: res("cpu", "10"), NoLend: true})
	_ = tr.Upsert(Spec{Name: "borrower", Parent: "parent", Max: res("cpu", "10")})
	if s := tr.Check("borrower", res("cpu", "4")); s != nil {
		t.Fatalf("borrower refused what is not kept: %s", s.Message())
	}
	tr.Charge("borrower", res("cpu", "4"))
	s := tr.Check("borrower", res("cpu", "1"))
	if s == nil || s.Quota != "parent" || s.Reserved != 6000 {
		t.Fatalf("borrower took the keeper's unused min: %+v", s)
	}
	want := "insufficient quota: quota parent, an ancestor of quota borrower, has 0 cpu free (used 4, min 0, max 10, 6 kept by quotas that do not lend their min), the unit requests 1 cpu: 1 more cpu needed"
	if s.Message() != want {
		t.Errorf("message %q, want %q", s.Message(), want)
	}
	// The keeper's own units use its min at once, no reclaim needed.
	if s := tr.Check("keeper", res("cpu", "6")); s != nil {
		t.Fatalf("keeper refused its own min: %s", s.Message())
	}
	tr.Charge("keeper", res("cpu", "2"))
	// 2 of its min are used: 4 stay kept, and the borrower still gets nothing.
	if s := tr.Check("borrower", res("cpu", "1")); s == nil || s.Reserved != 4000 {
		t.Fatalf("after the keeper used 2: %+v", s)
	}
	// Lending again frees the room for the borrower.
	_ = tr.Upsert(Spec{Name: "keeper", Parent: "parent", Min: res("cpu", "6"), Max: res("cpu", "10")})
	if s := tr.Check("borrower", res("cpu", "4")); s != nil {
		t.Errorf("after lending: %s", s.Message())
	}
}

func TestShareIsDominantBorrowingOverWeight(t *testing.T) {
	tr := New(1)
	_ = tr.Upsert(Spec{Name: "p", Max: res("cpu", "12", "memory", "48Gi")})
	_ = tr.Upsert(Spec{Name: "a", Parent: "p", Max: res("cpu", "12", "memory", "48Gi"), Weight: res("cpu", "1", "memory", "4Gi")})
	_ = tr.Upsert(Spec{Name: "b", Parent: "p", Min: res("cpu", "2"), Max: res("cpu", "12")})
	tr.Charge("a", res("cpu", "2", "memory", "4Gi"))
	if got := tr.Share("a"); got != 2 {
		t.Errorf("a's share = %v, want 2 (cpu 2/1 dominates memory 4Gi/4Gi)", got)
	}
	tr.Charge("b", res("cpu", "1"))
	if got := tr.Share("b"); got >= 0 {
		t.Errorf("b under its min has share %v, want negative", got)
	}
}

// A leaf is a known quota with nothing below it; a parent named before it
// exists has its child below it, and an unknown name is no leaf.
func TestLeaf(t *testing.T) {
	tr := New(1)
	for _, s := range []Spec{{Name: "parent"}, {Name: "a", Parent: "parent"}, {Name: "b", Parent: "later"}} {
		if err := tr.Upsert(s); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[schedtypes.QuotaName]bool{"parent": false, "a": true, "b": true, "later": false, "unknown": false} {
		if got := tr.Leaf(name); got != want {
			t.Errorf("Leaf(%s) = %v, want %v", name, got, want)
		}
	}
	tr.Delete("a")
	if !tr.Leaf("parent") {
		t.Error("parent is no leaf once its only child is gone")
	}
}
