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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// twoTeams is a top-level quota org (6 CPUs) with two children, each with a
// min of 2 and a max of 4.
func twoTeams() []*quotaObj {
	return []*quotaObj{
		utiltesting.MakeElasticQuota("org").IsParent(true).Max(corev1.ResourceCPU, "6").Obj(),
		utiltesting.MakeElasticQuota("team-a").Parent("org").Min(corev1.ResourceCPU, "2").Max(corev1.ResourceCPU, "4").Obj(),
		utiltesting.MakeElasticQuota("team-b").Parent("org").Min(corev1.ResourceCPU, "2").Max(corev1.ResourceCPU, "4").Obj(),
	}
}

func TestMap(t *testing.T) {
	p, _ := newTestPlugin(t, nil)
	labelled := utiltesting.MakeQueueUnit("a", "default").Quota("team-a").Queue("other").Obj()
	if q, quota := p.Map(labelled); q != "team-a" || quota != "team-a" {
		t.Errorf("Map of a unit with the quota label = %q, %q; want team-a for both", q, quota)
	}
	unlabelled := utiltesting.MakeQueueUnit("b", "default").Queue("team-b").Obj()
	if q, quota := p.Map(unlabelled); q != "team-b" || quota != "team-b" {
		t.Errorf("Map of a unit with spec.queue only = %q, %q; want team-b for both", q, quota)
	}
}

func TestCohortIsTheTopLevelQuota(t *testing.T) {
	quotas := append(twoTeams(), utiltesting.MakeElasticQuota("solo").Max(corev1.ResourceCPU, "1").Obj(),
		utiltesting.MakeElasticQuota("team-a-1").Parent("team-a").Max(corev1.ResourceCPU, "1").Obj())
	p, _ := newTestPlugin(t, nil, quotas...)
	for q, want := range map[schedtypes.QuotaName]schedtypes.CohortName{"org": "org", "team-a": "org", "team-b": "org", "team-a-1": "org", "solo": "solo"} {
		if got := p.Cohort(q); got != want {
			t.Errorf("Cohort(%s) = %q, want %q", q, got, want)
		}
	}
}

func TestFilter(t *testing.T) {
	p, _ := newTestPlugin(t, nil, twoTeams()...)
	// team-b holds 3 of org's 6 CPUs.
	p.SetUsage("default/b", holding(unit("b", "team-b", 0, 3), time.Time{}))
	for _, tc := range []struct {
		name       string
		unit       *framework.UnitInfo
		code       framework.Code
		reasonHead string
		inMessage  string
	}{
		{"fits", unit("a", "team-a", 0, 3), framework.Success, "", ""},
		{"no quota", unit("a", "", 0, 1), framework.UnschedulableAndUnresolvable, "noquota", schedv1alpha1.QuotaNameLabel},
		{"above its own max", unit("a", "team-a", 0, 5), framework.UnschedulableAndUnresolvable, "never/team-a/cpu", "can never fit"},
		{"above what the parent has left", unit("a", "team-a", 0, 4), framework.Unschedulable, "short/org/cpu", "ancestor of quota team-a"},
		{"unknown quota", unit("a", "ghost", 0, 1), framework.Unschedulable, "notfound/ghost", "ghost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := p.Filter(context.Background(), tc.unit)
			if tc.code == framework.Success {
				if !s.IsSuccess() {
					t.Fatalf("refused: %+v", s)
				}
				return
			}
			if s == nil || s.Code != tc.code || !strings.HasPrefix(s.Reason.String(), tc.reasonHead) || !strings.Contains(s.Message, tc.inMessage) {
				t.Fatalf("got %+v; want code %d, reason %s..., a message with %q", s, tc.code, tc.reasonHead, tc.inMessage)
			}
		})
	}
}

// TestFilterBorrowing checks that a quota may go above its min up to its max
// while its parent has room, and WouldBorrow says when it does.
func TestFilterBorrowing(t *testing.T) {
	p, _ := newTestPlugin(t, nil, twoTeams()...)
	a := unit("a", "team-a", 0, 4)
	if p.WouldBorrow(unit("small", "team-a", 0, 2)) {
		t.Error("2 CPUs of a quota with min 2 counted as borrowing")
	}
	if !p.WouldBorrow(a) {
		t.Error("4 CPUs of a quota with min 2 not counted as borrowing")
	}
	if s := p.Filter(context.Background(), a); !s.IsSuccess() {
		t.Fatalf("borrowing while org has room refused: %+v", s)
	}
	if s := p.Reserve(context.Background(), a); !s.IsSuccess() {
		t.Fatalf("Reserve: %+v", s)
	}
	// org has 2 left: team-b gets its min, not more.
	if s := p.Filter(context.Background(), unit("b", "team-b", 0, 2)); !s.IsSuccess() {
		t.Errorf("team-b's min refused while team-a borrows: %+v", s)
	}
	if s := p.Filter(context.Background(), unit("b", "team-b", 0, 3)); s.IsSuccess() || s.Code != framework.Unschedulable {
		t.Errorf("3 CPUs of team-b fit although org has 2 left: %+v", s)
	}
	if !p.WouldBorrow(unit("more", "team-a", 0, 1)) {
		t.Error("any more of team-a is borrowing once it holds 4")
	}
}

// TestOversellComesFromTheArguments checks that oversellRate scales every
// max, and that without it nothing is oversold.
func TestOversellComesFromTheArguments(t *testing.T) {
	q := utiltesting.MakeElasticQuota("q").Max(corev1.ResourceCPU, "4").Obj()
	plain, _ := newTestPlugin(t, nil, q.DeepCopy())
	oversold, _ := newTestPlugin(t, &configv1.ElasticQuotaArgs{OversellRate: ptr.To(1.5)}, q.DeepCopy())
	six := unit("six", "q", 0, 6)
	if s := plain.Filter(context.Background(), six); s.IsSuccess() || s.Code != framework.UnschedulableAndUnresolvable {
		t.Errorf("without oversell, 6 CPUs of a 4-CPU quota: %+v, want never fits", s)
	}
	if s := oversold.Filter(context.Background(), six); !s.IsSuccess() {
		t.Errorf("with oversellRate 1.5, 6 CPUs of a 4-CPU quota refused: %+v", s)
	}
	if s := oversold.Filter(context.Background(), unit("seven", "q", 0, 7)); s.IsSuccess() {
		t.Error("with oversellRate 1.5, 7 CPUs of a 4-CPU quota fit")
	}
}

func TestReserveAndUnreserve(t *testing.T) {
	p, h := newTestPlugin(t, nil, twoTeams()...)
	first, second := unit("first", "team-a", 0, 3), unit("second", "team-a", 0, 2)
	if s := p.Reserve(context.Background(), first); !s.IsSuccess() {
		t.Fatalf("Reserve: %+v", s)
	}
	if got := usedCPU(t, p, "team-a"); got != 3000 {
		t.Errorf("team-a uses %dm after reserving 3 CPUs", got)
	}
	if got := usedCPU(t, p, "org"); got != 3000 {
		t.Errorf("org uses %dm after its child reserved 3 CPUs", got)
	}
	if s := p.Reserve(context.Background(), second); s.IsSuccess() || s.Code != framework.Unschedulable {
		t.Errorf("Reserve above team-a's max: %+v, want Unschedulable", s)
	}
	if freed := h.takeFreed(); len(freed) != 0 {
		t.Errorf("a refused reserve freed %v", freed)
	}
	p.Unreserve(context.Background(), first)
	if diff := cmp.Diff([]schedtypes.CohortName{"org"}, h.takeFreed()); diff != "" {
		t.Errorf("cohorts freed by Unreserve (-want +got):\n%s", diff)
	}
	if got := usedCPU(t, p, "team-a"); got != 0 {
		t.Errorf("team-a uses %dm after Unreserve", got)
	}
	if s := p.Reserve(context.Background(), second); !s.IsSuccess() {
		t.Errorf("Reserve after the room was given back: %+v", s)
	}
	// Unreserving what holds nothing frees nothing.
	p.Unreserve(context.Background(), unit("never", "team-a", 0, 1))
	if freed := h.takeFreed(); len(freed) != 0 {
		t.Errorf("Unreserve of a unit that holds nothing freed %v", freed)
	}
}

func TestReserveStampsTheAllocationTime(t *testing.T) {
	p, h := newTestPlugin(t, nil, utiltesting.MakeElasticQuota("q").Max(corev1.ResourceCPU, "4").Obj())
	u := unit("u", "q", 3, 1)
	if s := p.Reserve(context.Background(), u); !s.IsSuccess() {
		t.Fatal(s)
	}
	got := p.charged[u.Key]
	if !got.AllocatedAt.Equal(h.clock.Now()) || got.Priority != 3 || got.Quota != "q" {
		t.Errorf("charge %+v; want quota q, priority 3, allocated at the clock's now %v", got, h.clock.Now())
	}
}

func TestSetUsage(t *testing.T) {
	p, h := newTestPlugin(t, nil, twoTeams()...)
	at := h.clock.Now()
	u := unit("u", "team-a", 0, 2)
	steps := []struct {
		name              string
		set               func()
		usedA, usedB, org int64
		freed             []schedtypes.CohortName
	}{
		{"charged", func() { p.SetUsage(u.Key, holding(u, at)) }, 2000, 0, 2000, nil},
		{"same again", func() { p.SetUsage(u.Key, holding(u, at)) }, 2000, 0, 2000, nil},
		{"grows", func() { p.SetUsage(u.Key, holding(unit("u", "team-a", 0, 3), at)) }, 3000, 0, 3000, nil},
		{"shrinks", func() { p.SetUsage(u.Key, holding(u, at)) }, 2000, 0, 2000, []schedtypes.CohortName{"org"}},
		{"moves to team-b", func() { p.SetUsage(u.Key, holding(unit("u", "team-b", 0, 2), at)) }, 0, 2000, 2000, []schedtypes.CohortName{"org"}},
		{"zero usage is none", func() { p.SetUsage(u.Key, holding(unit("u", "team-b", 0, 0), at)) }, 0, 0, 0, []schedtypes.CohortName{"org"}},
		{"nil of a unit that holds nothing", func() { p.SetUsage(u.Key, nil) }, 0, 0, 0, nil},
	}
	for _, st := range steps {
		st.set()
		for q, want := range map[schedtypes.QuotaName]int64{"team-a": st.usedA, "team-b": st.usedB, "org": st.org} {
			if got := usedCPU(t, p, q); got != want {
				t.Errorf("%s: %s uses %dm, want %dm", st.name, q, got, want)
			}
		}
		if diff := cmp.Diff(st.freed, h.takeFreed()); diff != "" {
			t.Errorf("%s: cohorts freed (-want +got):\n%s", st.name, diff)
		}
	}
}

// TestPreemptInsideAQuota checks that preemption evicts lower priority
// units of the unit's own quota, and only when asked.
func TestPreemptInsideAQuota(t *testing.T) {
	p, h := newTestPlugin(t, &configv1.ElasticQuotaArgs{ReclaimProtectionPeriod: &metav1.Duration{}},
		utiltesting.MakeElasticQuota("q").Max(corev1.ResourceCPU, "4").Obj())
	low := unit("low", "q", 1, 4)
	p.SetUsage(low.Key, holding(low, h.clock.Now()))
	high := unit("high", "q", 10, 4)

	if v := p.Preempt(context.Background(), high, false, true, nil); len(v.Units) != 0 {
		t.Errorf("reclaim alone evicted %v inside one quota", v.Units)
	}
	v := p.Preempt(context.Background(), high, true, false, nil)
	if len(v.Units) != 1 || v.Units[0].Key != low.Key || v.Reclaim {
		t.Fatalf("victims %+v; want the low priority unit, by preemption", v)
	}
	if v := p.Preempt(context.Background(), high, true, false, func(k schedtypes.UnitKey) bool { return k == low.Key }); len(v.Units) != 0 {
		t.Errorf("a skipped unit was chosen: %+v", v.Units)
	}
	if v := p.Preempt(context.Background(), unit("peer", "q", 1, 4), true, false, nil); len(v.Units) != 0 {
		t.Errorf("a unit of the same priority was evicted: %+v", v.Units)
	}
	// A victim already on its way out is waited for, not chosen again.
	evicting := holding(low, h.clock.Now())
	evicting.Evicting = true
	p.SetUsage(low.Key, evicting)
	if v := p.Preempt(context.Background(), high, true, false, nil); !v.Waiting || len(v.Units) != 0 {
		t.Errorf("with the victim evicting: %+v, want Waiting", v)
	}
}

// TestReclaimWaitsForTheProtectionPeriod checks, on a fake clock, that
// reclaim leaves units admitted less than reclaimProtectionPeriod ago alone,
// says when the period ends, and takes them after.
func TestReclaimWaitsForTheProtectionPeriod(t *testing.T) {
	const protection = 2 * time.Minute
	quotas := []*quotaObj{
		utiltesting.MakeElasticQuota("org").IsParent(true).Max(corev1.ResourceCPU, "8").Obj(),
		utiltesting.MakeElasticQuota("a").Parent("org").Min(corev1.ResourceCPU, "4").Max(corev1.ResourceCPU, "8").Obj(),
		utiltesting.MakeElasticQuota("b").Parent("org").Min(corev1.ResourceCPU, "4").Max(corev1.ResourceCPU, "8").Obj(),
	}
	p, h := newTestPlugin(t, &configv1.ElasticQuotaArgs{ReclaimProtectionPeriod: &metav1.Duration{Duration: protection}}, quotas...)
	admitted := h.clock.Now()
	b1, b2 := unit("b1", "b", 0, 4), unit("b2", "b", 0, 4)
	p.SetUsage(b1.Key, holding(b1, admitted))
	p.SetUsage(b2.Key, holding(b2, admitted))
	a := unit("a", "a", 0, 4)
	if s := p.Filter(context.Background(), a); s.IsSuccess() {
		t.Fatal("a fits although b holds all of org")
	}

	h.clock.Step(protection / 2)
	v := p.Preempt(context.Background(), a, false, true, nil)
	if len(v.Units) != 0 || !v.RetryAt.Equal(admitted.Add(protection)) {
		t.Fatalf("inside the protection period: %+v; want no victims and RetryAt %v", v, admitted.Add(protection))
	}
	// Asked again at once, with nothing changed, the answer stands.
	if again := p.Preempt(context.Background(), a, false, true, nil); len(again.Units) != 0 || !again.RetryAt.Equal(v.RetryAt) {
		t.Errorf("repeated search: %+v", again)
	}

	h.clock.Step(protection/2 + time.Second)
	v = p.Preempt(context.Background(), a, false, true, nil)
	if len(v.Units) != 1 || v.Units[0].Quota != "b" || !v.Reclaim {
		t.Fatalf("after the protection period: %+v; want one unit of b, by reclaim", v)
	}
}

// TestPreemptRepeatsASearchWhenUsageChanges checks that a search that found
// nobody is not trusted once what units hold in the cohort changes.
func TestPreemptRepeatsASearchWhenUsageChanges(t *testing.T) {
	p, h := newTestPlugin(t, &configv1.ElasticQuotaArgs{ReclaimProtectionPeriod: &metav1.Duration{}},
		utiltesting.MakeElasticQuota("q").Max(corev1.ResourceCPU, "4").Obj())
	same := unit("same", "q", 5, 4)
	p.SetUsage(same.Key, holding(same, h.clock.Now()))
	high := unit("high", "q", 5, 4)
	if v := p.Preempt(context.Background(), high, true, false, nil); len(v.Units) != 0 {
		t.Fatalf("a unit of equal priority was chosen: %+v", v)
	}
	low := unit("same", "q", 1, 4)
	p.SetUsage(low.Key, holding(low, h.clock.Now()))
	if v := p.Preempt(context.Background(), high, true, false, nil); len(v.Units) != 1 {
		t.Errorf("after the holder's priority dropped: %+v, want it chosen", v)
	}
}

func TestShareAndSharing(t *testing.T) {
	quotas := twoTeams()
	p, _ := newTestPlugin(t, nil, quotas...)
	if p.Sharing() {
		t.Error("fair sharing on without any shared-weight annotation")
	}
	weighted := quotas[1].DeepCopy()
	weighted.Annotations = map[string]string{"quota.scheduling.koordinator.sh/shared-weight": `{"cpu":"3"}`}
	p.follow.onQuota(weighted)
	if !p.Sharing() {
		t.Error("fair sharing off with a shared-weight annotation")
	}
	idle := p.Share("team-a")
	p.SetUsage("default/x", holding(unit("x", "team-a", 0, 4), time.Time{}))
	if busy := p.Share("team-a"); !(busy > idle) {
		t.Errorf("Share of team-a went from %v to %v when it borrowed: want it to grow", idle, busy)
	}
}

func TestNewDecodesItsArgumentsStrictly(t *testing.T) {
	for _, tc := range []struct {
		name, raw, want string
	}{
		{"misspelt field", `{"sharedQuota": true}`, `unknown field "sharedQuota"`},
		{"oversell below 1", `{"oversellRate": 0.5}`, "oversellRate"},
		{"oversell not a number", `{"oversellRate": "lots"}`, "oversellRate"},
		{"negative protection", `{"reclaimProtectionPeriod": "-1m"}`, "reclaimProtectionPeriod"},
		{"protection without a unit", `{"reclaimProtectionPeriod": 90}`, "reclaimProtectionPeriod"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(runtime.RawExtension{Raw: []byte(tc.raw)}, newTestHandle())
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), configv1.PluginElasticQuotaV2) {
				t.Fatalf("error %v; want one naming %s and %q", err, configv1.PluginElasticQuotaV2, tc.want)
			}
		})
	}
}

func TestArgumentDefaults(t *testing.T) {
	p, _ := newTestPlugin(t, nil)
	if p.protection != configv1.DefaultReclaimProtectionPeriod || p.tree.Oversell() != 1 || p.shared {
		t.Errorf("defaults: protection %v, oversell %v, shared %v; want 5m, 1, false", p.protection, p.tree.Oversell(), p.shared)
	}
	args := &configv1.ElasticQuotaArgs{SharedQuotas: true, OversellRate: ptr.To(2.0), ReclaimProtectionPeriod: &metav1.Duration{Duration: time.Minute}}
	p, _ = newTestPlugin(t, args)
	if p.protection != time.Minute || p.tree.Oversell() != 2 || !p.shared {
		t.Errorf("given: protection %v, oversell %v, shared %v; want 1m, 2, true", p.protection, p.tree.Oversell(), p.shared)
	}
	if args.OversellRate == nil || *args.OversellRate != 2 || args.ReclaimProtectionPeriod.Duration != time.Minute {
		t.Error("building the plugin changed the arguments it was given")
	}
}
