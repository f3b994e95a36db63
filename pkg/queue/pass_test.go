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
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type harness struct {
	m     *Manager
	tree  *quota.Tree
	tries []string
}

func newHarness(t *testing.T, quotas ...quota.Spec) *harness {
	t.Helper()
	h := &harness{m: NewManager(nil), tree: quota.New(1)}
	for _, q := range quotas {
		if err := h.tree.Upsert(q); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func (h *harness) try(u *schedtypes.Unit, _ Settings) *schedtypes.Failure {
	h.tries = append(h.tries, u.Name)
	if s := h.tree.Check(u.Quota, u.Request); s != nil {
		return &schedtypes.Failure{Reason: s.Reason(), Message: s.Message(), NeverFits: s.NeverFits}
	}
	h.tree.Charge(u.Quota, u.Request)
	return nil
}

func (h *harness) add(queueName schedtypes.QueueName, name string, quotaName schedtypes.QuotaName, prio int32, cpu int64) {
	u := &schedtypes.Unit{Key: schedtypes.UnitKey("ns/" + name), Namespace: "ns", Name: name, Priority: prio, Created: t0.Add(time.Duration(len(h.m.units)) * time.Second),
		Quota: quotaName, Cohort: h.tree.Cohort(quotaName), Request: schedtypes.Resources{"cpu": cpu * 1000}}
	h.m.Upsert(u, queueName, true)
}

func (h *harness) pass() []string {
	h.tries = nil
	var out []string
	for _, a := range h.m.Pass(h.try).Admitted {
		out = append(out, a.Unit.Name)
	}
	return out
}

func cpu(n int64) schedtypes.Resources { return schedtypes.Resources{"cpu": n * 1000} }

func TestPolicies(t *testing.T) {
	type unit struct {
		name  string
		quota schedtypes.QuotaName
		prio  int32
		cpu   int64
	}
	cases := []struct {
		name      string
		policy    schedv1alpha1.QueuePolicy
		threshold int32
		used      map[schedtypes.QuotaName]int64
		units     []unit
		want      []string
	}{
		{name: "Priority skips a unit that does not fit", policy: schedv1alpha1.QueuePolicyPriority, used: map[schedtypes.QuotaName]int64{"a": 6},
			units: []unit{{"big", "a", 10, 8}, {"small", "a", 1, 1}}, want: []string{"small"}},
		{name: "Block holds later units of the same quota", policy: schedv1alpha1.QueuePolicyBlock, used: map[schedtypes.QuotaName]int64{"a": 6},
			units: []unit{{"big", "a", 10, 8}, {"small", "a", 1, 1}}},
		{name: "Block lets other quotas through", policy: schedv1alpha1.QueuePolicyBlock, used: map[schedtypes.QuotaName]int64{"a": 6},
			units: []unit{{"big", "a", 10, 8}, {"small", "b", 1, 1}}, want: []string{"small"}},
		{name: "Block: a unit that can never fit blocks nothing", policy: schedv1alpha1.QueuePolicyBlock,
			units: []unit{{"huge", "a", 10, 11}, {"small", "a", 1, 1}}, want: []string{"small"}},
		{name: "Intelligent: high band blocks its quota, low band elsewhere proceeds", policy: schedv1alpha1.QueuePolicyIntelligent, threshold: 4,
			used:  map[schedtypes.QuotaName]int64{"a": 6},
			units: []unit{{"p5", "a", 5, 8}, {"p4", "a", 4, 1}, {"p3-other", "b", 3, 1}, {"p3-same", "a", 3, 1}},
			want:  []string{"p3-other"}},
		{name: "Intelligent: threshold is inclusive", policy: schedv1alpha1.QueuePolicyIntelligent, threshold: 5,
			used:  map[schedtypes.QuotaName]int64{"a": 6},
			units: []unit{{"p5", "a", 5, 8}, {"p4", "a", 4, 1}}},
		{name: "Intelligent: low band behaves like Priority", policy: schedv1alpha1.QueuePolicyIntelligent, threshold: 4,
			used:  map[schedtypes.QuotaName]int64{"a": 6},
			units: []unit{{"p3-big", "a", 3, 8}, {"p2-small", "a", 2, 1}}, want: []string{"p2-small"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, quota.Spec{Name: "a", Max: cpu(10)}, quota.Spec{Name: "b", Max: cpu(10)})
			h.m.UpsertQueue(Settings{Name: "q", Policy: tc.policy, Threshold: tc.threshold})
			for q, n := range tc.used {
				h.tree.Charge(q, cpu(n))
			}
			for _, u := range tc.units {
				h.add("q", u.name, u.quota, u.prio, u.cpu)
			}
			if diff := cmp.Diff(tc.want, h.pass()); diff != "" {
				t.Errorf("admitted (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIntelligentBandMovesOnThresholdChange(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(10)})
	h.tree.Charge("a", cpu(6))
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyIntelligent, Threshold: 4})
	h.add("q", "p5", "a", 5, 8)
	h.add("q", "p3", "a", 3, 1)
	if got := h.pass(); len(got) != 0 {
		t.Fatalf("admitted %v while p5 waits in the high band", got)
	}
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyIntelligent, Threshold: 6})
	if diff := cmp.Diff([]string{"p3"}, h.pass()); diff != "" {
		t.Errorf("after threshold 6 (-want +got):\n%s", diff)
	}
}

func TestPolicyChangeKeepsUnitsAndOrder(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(1)})
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyBlock})
	for i, p := range []int32{1, 3, 2} {
		h.add("q", fmt.Sprintf("u%d", i), "a", p, 2)
	}
	before, _ := h.m.Pending("q")
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority})
	after, _ := h.m.Pending("q")
	names := func(ps []Position) (out []string) {
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	if diff := cmp.Diff(names(before), names(after)); diff != "" || len(after) != 3 {
		t.Errorf("units or order changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"u1", "u2", "u0"}, names(after)); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestMaxDepth(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(10)})
	h.tree.Charge("a", cpu(6))
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority, MaxDepth: 1})
	h.add("q", "big", "a", 10, 8)
	h.add("q", "small", "a", 1, 1)
	if got := h.pass(); len(got) != 0 {
		t.Errorf("admitted %v beyond max-depth 1", got)
	}
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority, MaxDepth: 2})
	if diff := cmp.Diff([]string{"small"}, h.pass()); diff != "" {
		t.Errorf("max-depth 2 (-want +got):\n%s", diff)
	}
}

func TestWaitForPodsRunning(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(10)})
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority, WaitForPodsRunning: true})
	h.add("q", "first", "a", 2, 1)
	h.add("q", "second", "a", 1, 1)
	if diff := cmp.Diff([]string{"first"}, h.pass()); diff != "" {
		t.Fatalf("first pass (-want +got):\n%s", diff)
	}
	if got := h.pass(); len(got) != 0 {
		t.Fatalf("admitted %v before first's pods run", got)
	}
	h.m.PodsRunning("ns/first")
	if diff := cmp.Diff([]string{"second"}, h.pass()); diff != "" {
		t.Errorf("after running (-want +got):\n%s", diff)
	}
}

// A fresh manager told which admitted units do not run yet (as the scheduler
// does from the API after a restart) keeps the queue waiting for them, and
// only for units of that queue.
func TestWaitForPodsRunningRebuilt(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(10)})
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority, WaitForPodsRunning: true})
	h.m.UpsertQueue(Settings{Name: "other", Policy: schedv1alpha1.QueuePolicyPriority, WaitForPodsRunning: true})
	h.m.AdmittedNotRunning("q", "ns/admitted-before-restart")
	h.m.AdmittedNotRunning("other", "ns/also-starting")
	h.m.PodsRunning("ns/also-starting")
	h.add("q", "next", "a", 1, 1)
	h.add("other", "free", "a", 1, 1)
	if diff := cmp.Diff([]string{"free"}, h.pass()); diff != "" {
		t.Fatalf("pass with q waiting (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]schedtypes.UnitKey{"ns/admitted-before-restart"}, h.m.Starting("q")); diff != "" {
		t.Errorf("starting units of q (-want +got):\n%s", diff)
	}
	h.m.PodsRunning("ns/admitted-before-restart")
	if diff := cmp.Diff([]string{"next"}, h.pass()); diff != "" {
		t.Errorf("after its pods run (-want +got):\n%s", diff)
	}
}

func TestOrdering(t *testing.T) {
	m := NewManager(nil)
	m.UpsertQueue(Settings{Name: "q"})
	for _, u := range []*schedtypes.Unit{
		{Key: "ns/c", Namespace: "ns", Name: "c", Priority: 1, Created: t0},
		{Key: "ns/b", Namespace: "ns", Name: "b", Priority: 1, Created: t0},
		{Key: "ns/late", Namespace: "ns", Name: "late", Priority: 5, Created: t0.Add(time.Hour)},
		{Key: "ns/early", Namespace: "ns", Name: "early", Priority: 5, Created: t0},
	} {
		m.Upsert(u, "q", true)
	}
	m.Upsert(&schedtypes.Unit{Key: "ns/c", Namespace: "ns", Name: "c", Priority: 9, Created: t0}, "q", true)
	got, _ := m.Pending("q")
	var names []string
	for _, p := range got {
		names = append(names, fmt.Sprintf("%d:%s", p.Position, p.Name))
	}
	if diff := cmp.Diff([]string{"1:c", "2:early", "3:late", "4:b"}, names); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestRetryIsEventDriven(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(4)})
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority})
	h.tree.Charge("a", cpu(4))
	h.add("q", "waiting", "a", 1, 4)
	res := h.m.Pass(h.try)
	if len(res.Failed) != 1 || !res.Failed[0].Changed {
		t.Fatalf("first failure not reported as changed: %+v", res.Failed)
	}
	h.pass()
	if len(h.tries) != 0 {
		t.Fatalf("retried %v with nothing changed", h.tries)
	}
	h.m.Freed("other-cohort")
	h.pass()
	if len(h.tries) != 0 {
		t.Fatalf("retried %v after a release in another cohort", h.tries)
	}
	h.tree.Release("a", cpu(4))
	h.m.Freed("a")
	if diff := cmp.Diff([]string{"waiting"}, h.pass()); diff != "" {
		t.Errorf("after release (-want +got):\n%s", diff)
	}
}

func TestEqualPriorityQueuesTakeTurns(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "parent", Max: cpu(4)},
		quota.Spec{Name: "x", Parent: "parent", Max: cpu(4)}, quota.Spec{Name: "y", Parent: "parent", Max: cpu(4)})
	h.m.UpsertQueue(Settings{Name: "x", Priority: 1000})
	h.m.UpsertQueue(Settings{Name: "y", Priority: 1000})
	for i := range 4 {
		h.add("x", fmt.Sprintf("x%d", i), "x", 0, 1)
		h.add("y", fmt.Sprintf("y%d", i), "y", 0, 1)
	}
	got := h.pass()
	if diff := cmp.Diff([]string{"x0", "y0", "x1", "y1"}, got); diff != "" {
		t.Errorf("admitted (-want +got):\n%s", diff)
	}
}

// Room freed in a cohort goes first to a quota below its min, which would
// otherwise reclaim it from a sibling that borrowed it in the same pass;
// once that quota has its min, queues take turns again.
func TestQueuesBelowTheirMinGoFirst(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first bool
		want  []string
	}{
		{"turns only", false, []string{"x0", "y0", "x1", "y1"}},
		{"below min first", true, []string{"y0", "y1", "x0", "y2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, quota.Spec{Name: "parent", Max: cpu(6)},
				quota.Spec{Name: "x", Parent: "parent", Min: cpu(2), Max: cpu(6)},
				quota.Spec{Name: "y", Parent: "parent", Min: cpu(2), Max: cpu(6)})
			h.tree.Charge("x", cpu(2)) // x has its min; y has nothing of its own
			if tc.first {
				h.m = NewManager(nil, WithGuaranteedFirst(func(q schedtypes.QueueName) bool { return h.tree.BelowMin(schedtypes.QuotaName(q)) }))
			}
			h.m.UpsertQueue(Settings{Name: "x", Priority: 1000})
			h.m.UpsertQueue(Settings{Name: "y", Priority: 1000})
			for i := range 3 {
				h.add("x", fmt.Sprintf("x%d", i), "x", 0, 1)
				h.add("y", fmt.Sprintf("y%d", i), "y", 0, 1)
			}
			if diff := cmp.Diff(tc.want, h.pass()); diff != "" {
				t.Errorf("admitted (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHigherPriorityQueueFirst(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "parent", Max: cpu(2)},
		quota.Spec{Name: "x", Parent: "parent"}, quota.Spec{Name: "y", Parent: "parent"})
	h.m.UpsertQueue(Settings{Name: "x", Priority: 1})
	h.m.UpsertQueue(Settings{Name: "y", Priority: 2})
	h.add("x", "x0", "x", 0, 1)
	h.add("x", "x1", "x", 0, 1)
	h.add("y", "y0", "y", 0, 1)
	h.add("y", "y1", "y", 0, 1)
	if diff := cmp.Diff([]string{"y0", "y1"}, h.pass()); diff != "" {
		t.Errorf("admitted (-want +got):\n%s", diff)
	}
}

func TestOrphansWaitForTheirQueue(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(4)})
	h.add("later", "u", "a", 0, 1)
	if got := h.pass(); len(got) != 0 {
		t.Fatalf("admitted %v without a queue", got)
	}
	if diff := cmp.Diff(map[schedtypes.QueueName][]schedtypes.UnitKey{"later": {"ns/u"}}, h.m.Orphans()); diff != "" {
		t.Errorf("orphans (-want +got):\n%s", diff)
	}
	h.m.UpsertQueue(Settings{Name: "later"})
	if diff := cmp.Diff([]string{"u"}, h.pass()); diff != "" {
		t.Errorf("after the queue appeared (-want +got):\n%s", diff)
	}
}

// A unit waiting for its victims keeps lower units of its quota from taking
// the room being made, even under the Priority policy.
func TestPreemptingBlocksItsQuota(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(4)}, quota.Spec{Name: "b", Max: cpu(4)})
	h.tree.Charge("a", cpu(3))
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority})
	h.add("q", "preemptor", "a", 10, 2)
	h.add("q", "low-a", "a", 1, 1)
	h.add("q", "low-b", "b", 1, 1)
	try := func(u *schedtypes.Unit, q Settings) *schedtypes.Failure {
		if u.Name == "preemptor" {
			return &schedtypes.Failure{Reason: schedtypes.Reason{Kind: schedtypes.WaitPreempting}, Preempting: true}
		}
		return h.try(u, q)
	}
	var got []string
	for _, a := range h.m.Pass(try).Admitted {
		got = append(got, a.Unit.Name)
	}
	if diff := cmp.Diff([]string{"low-b"}, got); diff != "" {
		t.Errorf("admitted (-want +got):\n%s", diff)
	}
	// Still blocked in a later pass where the preemptor is not retried.
	if got := h.pass(); len(got) != 0 {
		t.Errorf("admitted %v while the preemptor waits", got)
	}
}

// A unit held back until its cohort changes is not tried in every pass, as
// other held-back units are.
func TestHeldBackUntilCohortChanges(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(4)})
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority})
	h.add("q", "paused", "a", 1, 1)
	h.add("q", "held", "a", 1, 1)
	paused := true
	try := func(u *schedtypes.Unit, s Settings) *schedtypes.Failure {
		switch {
		case u.Name == "paused" && paused:
			h.tries = append(h.tries, u.Name)
			return &schedtypes.Failure{Reason: schedtypes.Reason{Kind: schedtypes.WaitBorrowingPaused}, HeldBack: true, UntilCohortChanges: true}
		case u.Name == "held":
			h.tries = append(h.tries, u.Name)
			return &schedtypes.Failure{Reason: schedtypes.Reason{Subject: "held"}, HeldBack: true}
		}
		return h.try(u, s)
	}
	run := func() []string {
		h.tries = nil
		var out []string
		for _, a := range h.m.Pass(try).Admitted {
			out = append(out, a.Unit.Name)
		}
		return out
	}
	run()
	run()
	if diff := cmp.Diff([]string{"held"}, h.tries); diff != "" {
		t.Fatalf("second pass tried (-want +got):\n%s", diff)
	}
	paused = false
	h.m.Freed("a")
	if diff := cmp.Diff([]string{"paused"}, run()); diff != "" {
		t.Errorf("after the cohort changed (-want +got):\n%s", diff)
	}
}

// A covering refusal ends the queue's turn when every unit asks at least as
// much; units never tried get the refusal, inferred.
func TestCoveringRefusalEndsTheQueue(t *testing.T) {
	setup := func(less schedtypes.Less, small bool) *harness {
		h := newHarness(t, quota.Spec{Name: "a", Max: cpu(4)})
		h.m = NewManager(less)
		h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority})
		h.tree.Charge("a", cpu(4))
		h.add("q", "u1", "a", 5, 2)
		h.add("q", "u2", "a", 5, 3)
		h.add("q", "u3", "a", 1, 2)
		if small {
			h.add("q", "u4", "a", 1, 1)
		}
		return h
	}
	covering := func(h *harness) Try {
		return func(u *schedtypes.Unit, s Settings) *schedtypes.Failure {
			f := h.try(u, s)
			if f != nil {
				f.Covering = true
			}
			return f
		}
	}

	h := setup(nil, false)
	res := h.m.Pass(covering(h))
	if diff := cmp.Diff([]string{"u1"}, h.tries); diff != "" {
		t.Errorf("tried (-want +got):\n%s", diff)
	}
	inferred := map[string]bool{}
	for _, o := range res.Failed {
		inferred[o.Unit.Name] = o.Failure.Inferred
	}
	if diff := cmp.Diff(map[string]bool{"u1": false, "u2": true, "u3": true}, inferred); diff != "" {
		t.Errorf("failures, inferred (-want +got):\n%s", diff)
	}
	// Once everyone has a reason, a retry tries the head alone and reports nothing new.
	h.tries = nil
	h.m.Freed("a")
	res = h.m.Pass(covering(h))
	if diff := cmp.Diff([]string{"u1"}, h.tries); diff != "" || len(res.Failed) != 1 {
		t.Errorf("retry tried %v, %d failures", h.tries, len(res.Failed))
	}

	// A smaller unit behind keeps the queue going.
	h = setup(nil, true)
	h.tree.Release("a", cpu(1))
	if diff := cmp.Diff([]string{"u4"}, h.pass()); diff != "" {
		t.Errorf("admitted with a smaller unit behind (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"u1", "u2", "u3", "u4"}, h.tries); diff != "" {
		t.Errorf("tried with a smaller unit behind (-want +got):\n%s", diff)
	}

	// An order that is not by priority first tries everyone.
	h = setup(func(a, b *schedtypes.Unit) bool { return a.Name < b.Name }, false)
	h.m.Pass(covering(h))
	if diff := cmp.Diff([]string{"u1", "u2", "u3"}, h.tries); diff != "" {
		t.Errorf("tried under a custom order (-want +got):\n%s", diff)
	}
}

// Units of a queue waiting for pods to run are told so once, not every pass.
func TestWaitForPodsRunningSaysWhy(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(10)})
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority, WaitForPodsRunning: true})
	h.m.AdmittedNotRunning("q", "ns/starting")
	h.add("q", "next", "a", 1, 1)
	res := h.m.Pass(h.try)
	if len(res.Failed) != 1 || res.Failed[0].Failure.Message != "waiting in queue q: it admits its next unit once the pods of the unit it admitted last are running (koord-queue/wait-for-pods-running)" {
		t.Fatalf("failed = %+v", res.Failed)
	}
	if res := h.m.Pass(h.try); len(res.Failed) != 0 {
		t.Errorf("told again although nothing changed: %+v", res.Failed[0].Failure)
	}
}

// A pass with a limit stops after that many admissions, in the order an
// unlimited pass would admit, and the next pass goes on where it stopped
// although nothing changed in between.
func TestPassUpToStopsAndTheNextGoesOn(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "parent", Max: cpu(10)},
		quota.Spec{Name: "x", Parent: "parent"}, quota.Spec{Name: "y", Parent: "parent"})
	h.m.UpsertQueue(Settings{Name: "x"})
	h.m.UpsertQueue(Settings{Name: "y"})
	for i := range 3 {
		h.add("x", fmt.Sprintf("x%d", i), "x", 0, 1)
		h.add("y", fmt.Sprintf("y%d", i), "y", 0, 1)
	}
	// Every unit is refused once, then the room comes back.
	h.tree.Charge("x", cpu(10))
	if got := h.pass(); len(got) != 0 {
		t.Fatalf("admitted %v into a full parent", got)
	}
	h.tree.Release("x", cpu(10))
	h.m.Freed("parent")
	upTo := func(n int) []string {
		var out []string
		for _, a := range h.m.PassUpTo(h.try, n).Admitted {
			out = append(out, a.Unit.Name)
		}
		return out
	}
	var got [][]string
	for _, n := range []int{3, 2, 0} {
		got = append(got, upTo(n))
	}
	// The refused pass moved the turns on: y goes first now.
	want := [][]string{{"y0", "x0", "y1"}, {"x1", "y2"}, {"x2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("admitted per pass (-want +got):\n%s", diff)
	}
}

// The walks a pass keeps for the next hold no unit once it ended, and a
// walk made of a kept one starts afresh: a Block queue whose head was
// refused in one pass does not hold back the next pass's units of another
// quota that it blocked nothing of.
func TestKeptWalksStartAfresh(t *testing.T) {
	h := newHarness(t,
		quota.Spec{Name: "a", Max: cpu(2)},
		quota.Spec{Name: "b", Max: cpu(2)})
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyBlock})
	h.tree.Charge("a", cpu(1))
	h.add("q", "big", "a", 5, 2)
	h.add("q", "a1", "a", 4, 1)
	if got := h.pass(); len(got) != 0 {
		t.Fatalf("first pass admitted %v, want nothing (big blocks quota a)", got)
	}
	if len(h.m.idleIters) == 0 {
		t.Fatal("the pass kept no walk")
	}
	for _, it := range h.m.idleIters {
		if it.q != nil || len(it.units) != 0 || len(it.blocked) != 0 || len(it.ahead) != 0 || slices.ContainsFunc(it.units[:cap(it.units)], func(u *schedtypes.Unit) bool { return u != nil }) {
			t.Fatalf("a kept walk still holds its pass's state: %+v", it)
		}
	}
	h.m.Delete("ns/big")
	h.m.Invalidate()
	h.add("q", "b1", "b", 4, 1)
	if diff := cmp.Diff([]string{"a1", "b1"}, h.pass()); diff != "" {
		t.Errorf("second pass admitted (-want +got):\n%s", diff)
	}
}
