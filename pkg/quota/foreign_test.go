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
	"strings"
	"testing"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// TestSetForeign checks that usage of pods koord-queue does not manage is
// charged to the quota and its ancestors, replaced (not added) when set
// again, reported as freed or grown, shown in Info, and never a victim.
func TestSetForeign(t *testing.T) {
	tr := New(1)
	_ = tr.Upsert(Spec{Name: "parent", Max: res("cpu", "10")})
	_ = tr.Upsert(Spec{Name: "team-a", Parent: "parent", Max: res("cpu", "4")})
	if dec, inc := tr.SetForeign("team-a", res("cpu", "2")); dec || !inc {
		t.Errorf("first charge: decreased %v, increased %v; want an increase", dec, inc)
	}
	// Set again to 3: 3 in all, not 5.
	if dec, inc := tr.SetForeign("team-a", res("cpu", "3")); dec || !inc {
		t.Errorf("3 CPU: decreased %v, increased %v; want an increase", dec, inc)
	}
	for _, name := range []schedtypes.QuotaName{"team-a", "parent"} {
		info, _ := tr.Get(name)
		if info.Used["cpu"] != 3000 || info.Foreign["cpu"] != 3000 {
			t.Errorf("%s: used %v, foreign %v; want 3 CPU of each", name, info.Used, info.Foreign)
		}
	}
	if dec, inc := tr.SetForeign("team-a", res("cpu", "3")); dec || inc {
		t.Errorf("same amount: decreased %v, increased %v; want neither", dec, inc)
	}
	// A 2-CPU unit does not fit beside it; the message names the pods.
	s := tr.Check("team-a", res("cpu", "2"))
	if s == nil {
		t.Fatal("2 CPU fit beside 3 CPU of foreign usage under a max of 4")
	}
	if s.Foreign != 3000 || !strings.Contains(s.Message(), "(used 3 of which 3 by pods koord-queue does not manage, min 0, max 4)") {
		t.Errorf("shortage %+v says %q", s, s.Message())
	}
	// Foreign usage is never a victim: no unit holds anything.
	if v := NewVictimSelector(tr).Select(Preemption{Quota: "team-a", Request: res("cpu", "2"), Priority: 100, Preempt: true, Reclaim: true}, nil); len(v.Units) > 0 || v.Waiting {
		t.Errorf("victims %+v for foreign usage", v)
	}
	if dec, inc := tr.SetForeign("team-a", res("cpu", "1")); !dec || inc {
		t.Errorf("1 CPU: decreased %v, increased %v; want a decrease", dec, inc)
	}
	if s := tr.Check("team-a", res("cpu", "2")); s != nil {
		t.Errorf("2 CPU do not fit beside 1 CPU under 4: %s", s.Message())
	}
	// Moving the quota moves its foreign usage.
	_ = tr.Upsert(Spec{Name: "other", Max: res("cpu", "10")})
	_ = tr.Upsert(Spec{Name: "team-a", Parent: "other", Max: res("cpu", "4")})
	if p, _ := tr.Get("parent"); !p.Used.IsZero() || !p.Foreign.IsZero() {
		t.Errorf("old parent keeps %v used, %v foreign", p.Used, p.Foreign)
	}
	if o, _ := tr.Get("other"); o.Foreign["cpu"] != 1000 || o.Used["cpu"] != 1000 {
		t.Errorf("new parent: used %v, foreign %v; want 1 CPU of each", o.Used, o.Foreign)
	}
	tr.SetForeign("team-a", nil)
	for _, name := range []schedtypes.QuotaName{"team-a", "other"} {
		if info, _ := tr.Get(name); !info.Used.IsZero() || !info.Foreign.IsZero() {
			t.Errorf("%s after clearing: used %v, foreign %v", name, info.Used, info.Foreign)
		}
	}
	// Foreign usage of a quota that is gone keeps a placeholder until cleared.
	tr.SetForeign("gone", res("cpu", "1"))
	if _, ok := tr.Get("gone"); !ok {
		t.Error("foreign usage of an unknown quota was lost")
	}
	tr.SetForeign("gone", nil)
	if _, ok := tr.Get("gone"); ok {
		t.Error("placeholder kept after its foreign usage went")
	}
}

// TestSharedWeightEqualToMax checks that a weight equal to the max (what
// Koordinator's webhook writes on every quota) asks for no fair sharing,
// and that one that differs does, until it goes.
func TestSharedWeightEqualToMax(t *testing.T) {
	tr := New(1)
	_ = tr.Upsert(Spec{Name: "a", Max: res("cpu", "4"), Weight: res("cpu", "4")})
	if tr.Weighted() {
		t.Error("a weight equal to max turned fair sharing on")
	}
	_ = tr.Upsert(Spec{Name: "b", Max: res("cpu", "4"), Weight: res("cpu", "1")})
	if !tr.Weighted() {
		t.Error("a weight below max did not turn fair sharing on")
	}
	_ = tr.Upsert(Spec{Name: "b", Max: res("cpu", "1"), Weight: res("cpu", "1")})
	if tr.Weighted() {
		t.Error("fair sharing stays on once the weight equals the max")
	}
	_ = tr.Upsert(Spec{Name: "b", Max: res("cpu", "4"), Weight: res("cpu", "1")})
	tr.Delete("b")
	if tr.Weighted() {
		t.Error("fair sharing stays on after the weighted quota is deleted")
	}
}

// TestSystemAndParentQuotas checks that no unit is admitted to one of
// Koordinator's own quotas or to a parent quota, and that a parent that
// loses its children is a leaf again.
func TestSystemAndParentQuotas(t *testing.T) {
	tr := New(1)
	for _, name := range []schedtypes.QuotaName{"koordinator-root-quota", "koordinator-system-quota", "koordinator-default-quota"} {
		s := tr.Check(name, res("cpu", "1"))
		if s == nil || !s.System {
			t.Errorf("%s: %+v, want a system-quota refusal", name, s)
			continue
		}
		if !strings.Contains(s.Message(), "one of Koordinator's own quotas") || s.Reason().String() != "system/"+string(name) {
			t.Errorf("%s: key %q, message %q", name, s.Reason(), s.Message())
		}
	}
	_ = tr.Upsert(Spec{Name: "labelled", IsParent: true, Max: res("cpu", "4")})
	_ = tr.Upsert(Spec{Name: "dept", Max: res("cpu", "4")})
	_ = tr.Upsert(Spec{Name: "team", Parent: "dept", Max: res("cpu", "4")})
	for _, name := range []schedtypes.QuotaName{"labelled", "dept"} {
		s := tr.Check(name, res("cpu", "1"))
		if s == nil || !s.Parent || s.Reason().String() != "parent/"+string(name) ||
			!strings.Contains(s.Message(), "Koordinator schedules no pod charged to a parent quota") {
			t.Errorf("%s: %+v, want a parent-quota refusal", name, s)
		}
		if NewHeldRoom(tr).CouldFit(name, res("cpu", "1"), nil, nil) {
			t.Errorf("%s: CouldFit says a parent quota could take a unit", name)
		}
	}
	if s := tr.Check("team", res("cpu", "1")); s != nil {
		t.Errorf("leaf refused: %s", s.Message())
	}
	// A top-level quota that names the root as its parent (what
	// Koordinator's webhook writes) is a child of the root, not refused.
	_ = tr.Upsert(Spec{Name: "top", Parent: RootName, Max: res("cpu", "4")})
	if s := tr.Check("top", res("cpu", "1")); s != nil {
		t.Errorf("quota under the root by name refused: %s", s.Message())
	}
	tr.Delete("team")
	if s := tr.Check("dept", res("cpu", "1")); s != nil {
		t.Errorf("dept still refused once its child went: %s", s.Message())
	}
}
