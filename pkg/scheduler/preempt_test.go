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

package scheduler

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// preemptionFixture has quota team-a (2 CPUs, queue LowerPriority) full with
// victim v (priority 1) and quota team-b (4 CPUs) in the same cohort org;
// the plugin names v as the victim of any unit that does not fit, unless
// the scheduler skips it.
func preemptionFixture(t *testing.T, mod func(*Options)) *fixture {
	t.Helper()
	f := newFixture(t, mod)
	f.plugin.setCapacity("team-a", 2)
	f.plugin.setCapacity("team-b", 4)
	f.plugin.cohorts["team-a"], f.plugin.cohorts["team-b"] = "org", "org"
	q := utiltesting.MakeQueue("team-a").Obj()
	q.Spec.PreemptionPolicy = schedv1alpha1.PreemptionLowerPriority
	f.addQueue(t, q)
	f.addQueue(t, utiltesting.MakeQueue("team-b").Obj())
	v := makeUnit("v", "team-a", "2").Priority(1).Phase(schedv1alpha1.QueueUnitPhaseRunning).Obj()
	v.Status.Quota = "team-a"
	v.Status.LastAllocateTime = &metav1.Time{Time: testStart.Add(-time.Hour)}
	f.addUnit(t, v)
	f.plugin.preempt = func(u *framework.UnitInfo, skip func(schedtypes.UnitKey) bool) schedtypes.Victims {
		h, ok := f.plugin.chargedTo("ns/v")
		if !ok || skip("ns/v") || h.Evicting {
			return schedtypes.Victims{Waiting: ok && h.Evicting}
		}
		return schedtypes.Victims{Units: []schedtypes.Holding{h}}
	}
	f.takeEvents()
	return f
}

// The victims of a unit that does not fit are told to give their quota back
// (Evicted=True, reason Preempted, their admissions' reclaim state, a
// Warning event), keep their charge meanwhile, and the preemptor says what it
// waits for; it is admitted once they gave the quota back.
func TestPreemptEvictsVictimsAndAdmitsOnceTheyAreBack(t *testing.T) {
	f := preemptionFixture(t, nil)
	f.addUnit(t, makeUnit("p", "team-a", "2").Priority(10).Obj())
	f.pass(t)

	v := f.get(t, "v")
	c := condition(v, schedv1alpha1.ConditionEvicted)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != schedv1alpha1.ReasonPreempted {
		t.Fatalf("victim's Evicted = %+v, want True Preempted", c)
	}
	wantText := "Preempted to admit ns/p (priority 10) in quota team-a"
	if c.Message != wantText {
		t.Errorf("Evicted message = %q, want %q", c.Message, wantText)
	}
	if got := eventsWith(f.takeEvents(), "Warning Preempted "+wantText); len(got) != 1 {
		t.Errorf("want one Warning Preempted event on the victim")
	}
	if h, ok := f.plugin.chargedTo("ns/v"); !ok || !h.Evicting || h.Used["cpu"] != 2000 {
		t.Fatalf("victim charged %+v, want its 2 CPUs kept while it is evicting", h)
	}
	if !f.s.preemptor.isNominated("ns/p") {
		t.Fatal("the preemptor is not nominated")
	}
	f.step(t, waitingWriteDelay, f.informDue)
	wantWaiting(t, f.get(t, "p"), "Preempting", "preempting 1 unit(s) (ns/v) to make room in quota team-a; admitted once they give it back")

	// Passes before the victim is back evict nobody else and admit nothing.
	f.s.env.queues.Invalidate()
	f.pass(t)
	if got := f.get(t, "p").Status.Phase; got == schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatal("the preemptor was admitted while its victim still holds the quota")
	}
	if got := eventsWith(f.takeEvents(), "Preempted to admit"); len(got) != 0 {
		t.Fatalf("the victim was evicted twice: %v", got)
	}

	// The extension finishes the eviction: the preemptor is admitted.
	f.extension(t, "v", func(u *schedv1alpha1.QueueUnit) {
		u.Status.Phase = schedv1alpha1.QueueUnitPhaseEnqueued
		u.Status.Admissions = nil
	})
	f.pass(t)
	if got := f.get(t, "p").Status.Phase; got != schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatalf("preemptor phase = %s, want admitted", got)
	}
	if f.s.preemptor.isNominated("ns/p") {
		t.Fatal("the admitted preemptor is still nominated")
	}
}

// While a unit is nominated, units of its cohort that would borrow above
// their min wait (RoomBeingMade, held back, no attempt); the end of the
// nomination lets them go.
func TestPreemptNominationPausesBorrowingInTheCohort(t *testing.T) {
	f := preemptionFixture(t, nil)
	f.plugin.borrows["team-b"] = true
	f.addUnit(t, makeUnit("p", "team-a", "2").Priority(10).Obj())
	f.pass(t)
	f.addUnit(t, makeUnit("b", "team-b", "1").Obj())
	f.addUnit(t, makeUnit("b2", "team-b", "1").Obj())
	f.pass(t)
	if got := f.get(t, "b").Status.Phase; got == schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatal("a unit that would borrow was admitted while room is made in its cohort")
	}
	f.step(t, waitingWriteDelay, f.informDue)
	b := f.get(t, "b")
	wantWaiting(t, b, "RoomBeingMade", "held back: room is being made by preemption for ns/p, and quota team-b would borrow above its min meanwhile")
	if b.Status.Attempts != 0 {
		t.Errorf("attempts = %d, want 0 for a held-back unit", b.Status.Attempts)
	}

	// b2, of team-b too and asking no more, came with b: it is refused by
	// inference, and told so with the same text, without a filter.
	wantWaiting(t, f.get(t, "b2"), "RoomBeingMade", "held back: room is being made by preemption for ns/p, and quota team-b would borrow above its min meanwhile")
	f.plugin.mu.Lock()
	filtered := f.plugin.filtered["ns/b2"]
	f.plugin.mu.Unlock()
	if filtered != 0 {
		t.Errorf("b2 was filtered %d times to be told a pause no filter gives", filtered)
	}

	// A unit of the cohort that would not borrow is not held back.
	f.plugin.setCapacity("team-c", 2)
	f.plugin.mu.Lock()
	f.plugin.cohorts["team-c"] = "org"
	f.plugin.mu.Unlock()
	f.addQueue(t, utiltesting.MakeQueue("team-c").Obj())
	f.addUnit(t, makeUnit("c", "team-c", "1").Obj())
	f.pass(t)
	if got := f.get(t, "c").Status.Phase; got != schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatalf("c: phase = %s, want admitted: it borrows nothing", got)
	}

	// The preemptor goes away: its nomination ends and b is admitted.
	f.s.intake.onUnitDelete(f.get(t, "p"))
	if f.s.preemptor.isNominated("ns/p") {
		t.Fatal("a deleted preemptor is still nominated")
	}
	f.pass(t)
	if got := f.get(t, "b").Status.Phase; got != schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatalf("b: phase = %s, want admitted once the nomination ended", got)
	}
}

// unnominate frees the cohort: units paused for the nominated unit are
// worth trying again.
func TestPreemptUnnominateFreesTheCohort(t *testing.T) {
	f := newFixture(t, nil)
	p := f.s.preemptor
	p.nominate("ns/p", "org")
	p.nominate("ns/q", "org")
	if got := p.nominated.other("org", "ns/p"); got != "ns/q" {
		t.Fatalf("other nominated = %q, want ns/q", got)
	}
	if got := p.nominated.other("org", "ns/x"); got == "" {
		t.Fatal("a unit of the cohort sees no nomination")
	}
	for len(f.s.env.queues.Kicked()) > 0 {
		<-f.s.env.queues.Kicked()
	}
	p.unnominate("ns/q")
	if got := p.nominated.other("org", "ns/p"); got != "" {
		t.Fatalf("ns/p sees %q nominated besides itself", got)
	}
	select {
	case <-f.s.env.queues.Kicked():
	default:
		t.Fatal("ending a nomination asked for no pass")
	}
	// Moving to another cohort leaves the first.
	p.nominate("ns/p", "other")
	if got := p.nominated.other("org", "ns/x"); got != "" {
		t.Fatalf("org still has %q nominated", got)
	}
	p.unnominate("ns/p")
	p.unnominate("ns/never")
	if len(p.nominated.byUnit) != 0 || len(p.nominated.byCohort) != 0 {
		t.Fatalf("nominations left: %v %v", p.nominated.byUnit, p.nominated.byCohort)
	}
}

// Victims still protected by reclaimProtectionPeriod: the unit says who
// will make room and when, a wakeup is set at that time on the clock, and a
// pass looks again when the clock gets there, with nothing else changing.
func TestPreemptProtectedVictimsWakeAPassAtRetryAt(t *testing.T) {
	f := preemptionFixture(t, nil)
	retryAt := testStart.Add(5 * time.Minute)
	f.plugin.preempt = func(u *framework.UnitInfo, skip func(schedtypes.UnitKey) bool) schedtypes.Victims {
		h, _ := f.plugin.chargedTo("ns/v")
		if f.clk.Now().Before(retryAt) {
			return schedtypes.Victims{RetryAt: retryAt, FreeAt: retryAt, Protected: []schedtypes.Holding{h}, Reclaim: true}
		}
		if skip("ns/v") || h.Evicting {
			return schedtypes.Victims{Waiting: h.Evicting}
		}
		return schedtypes.Victims{Units: []schedtypes.Holding{h}, Reclaim: true}
	}
	f.addUnit(t, makeUnit("p", "team-a", "2").Priority(10).Obj())
	f.timerSet(t, func() { f.pass(t) })
	if at, ok := f.s.wakeups.pending("org"); !ok || !at.Equal(retryAt) {
		t.Fatalf("wakeup of cohort org = %v %v, want %v", at, ok, retryAt)
	}
	f.step(t, waitingWriteDelay, f.informDue)
	wantWaiting(t, f.get(t, "p"), "WaitingForProtectionEnd",
		"insufficient quota: quota team-a has 0 cpu free, the unit requests 2000; room will be reclaimed from the quotas that borrow above their min: ns/v (quota team-a), protected until 2026-03-01T12:05:00Z (reclaimProtectionPeriod)")

	// Nothing changes before the deadline: no pass looks at p again.
	for len(f.s.env.queues.Kicked()) > 0 {
		<-f.s.env.queues.Kicked()
	}
	f.pass(t)
	searches := len(f.plugin.searches())
	f.pass(t)
	if got := len(f.plugin.searches()); got != searches {
		t.Fatalf("p was tried again before its victims' protection ended")
	}

	f.clk.SetTime(retryAt)
	select {
	case <-f.s.env.queues.Kicked():
	case <-time.After(10 * time.Second):
		t.Fatal("no pass was asked for at the end of the protection")
	}
	f.pass(t)
	if got := len(f.plugin.searches()); got != searches+1 {
		t.Fatalf("%d victim searches at the deadline, want one more", got-searches)
	}
	if c := condition(f.get(t, "v"), schedv1alpha1.ConditionEvicted); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("the victim was not evicted once its protection ended: %+v", c)
	}
}

// Preemption inside a quota only for queues whose policy is LowerPriority,
// and only while enablePreemption is not false; reclaim for every queue
// unless enableReclaim is false.
func TestPreemptWhatTheQueueAndTheConfigurationAllow(t *testing.T) {
	for _, tc := range []struct {
		name       string
		policy     schedv1alpha1.PreemptionPolicy
		annotation string
		preempt    *bool
		reclaim    *bool
		want       []string
	}{
		{name: "LowerPriority queue", policy: schedv1alpha1.PreemptionLowerPriority, want: []string{"ns/p preempt=true reclaim=true"}},
		{name: "default is Never", want: []string{"ns/p preempt=false reclaim=true"}},
		{name: "annotation", annotation: "LowerPriority", want: []string{"ns/p preempt=true reclaim=true"}},
		{name: "spec wins over annotation", policy: schedv1alpha1.PreemptionNever, annotation: "LowerPriority",
			want: []string{"ns/p preempt=false reclaim=true"}},
		{name: "preemption off", policy: schedv1alpha1.PreemptionLowerPriority, preempt: ptr.To(false),
			want: []string{"ns/p preempt=false reclaim=true"}},
		{name: "both off", policy: schedv1alpha1.PreemptionLowerPriority, preempt: ptr.To(false), reclaim: ptr.To(false)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(o *Options) {
				o.Config.EnablePreemption, o.Config.EnableReclaim = ptr.To(true), ptr.To(true)
				if tc.preempt != nil {
					o.Config.EnablePreemption = tc.preempt
				}
				if tc.reclaim != nil {
					o.Config.EnableReclaim = tc.reclaim
				}
			})
			f.plugin.setCapacity("team-a", 1)
			q := utiltesting.MakeQueue("team-a").Obj()
			q.Spec.PreemptionPolicy = tc.policy
			if tc.annotation != "" {
				q.Annotations = map[string]string{schedv1alpha1.PreemptionPolicyAnnotation: tc.annotation}
			}
			f.addQueue(t, q)
			f.addUnit(t, makeUnit("h", "team-a", "1").Phase(schedv1alpha1.QueueUnitPhaseRunning).Obj())
			f.addUnit(t, makeUnit("p", "team-a", "1").Priority(10).Obj())
			f.pass(t)
			if diff := cmp.Diff(tc.want, f.plugin.searches()); diff != "" {
				t.Fatalf("victim searches (-want +got):\n%s", diff)
			}
		})
	}
}

// Units whose admission is being written or that are being deleted are
// never victims.
func TestPreemptSkipsUnitsBeingAdmittedOrDeleted(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 4)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	f.addUnit(t, makeUnit("w", "team-a", "1").Obj())
	f.s.pass.schedule(f.ctx) // w's admission is in flight
	d := makeUnit("d", "team-a", "1").Phase(schedv1alpha1.QueueUnitPhaseRunning).Obj()
	d.Finalizers = []string{"scheduling.x-k8s.io/pods-gone"}
	f.addUnit(t, d)
	if err := f.c.Delete(f.ctx, f.get(t, "d")); err != nil {
		t.Fatal(err)
	}
	f.feed(t, "d")
	f.addUnit(t, makeUnit("r", "team-a", "1").Phase(schedv1alpha1.QueueUnitPhaseRunning).Obj())

	f.s.cache.mu.Lock()
	got := map[string]bool{"ns/w": f.s.cache.candidateLocked("ns/w"), "ns/d": f.s.cache.candidateLocked("ns/d"),
		"ns/r": f.s.cache.candidateLocked("ns/r"), "ns/gone": f.s.cache.candidateLocked("ns/gone")}
	f.s.cache.mu.Unlock()
	want := map[string]bool{"ns/w": false, "ns/d": false, "ns/r": true, "ns/gone": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("victim candidates (-want +got):\n%s", diff)
	}
}

// A preemptor held back behind something else (here its queue waits for the
// pods of a unit it admitted) is not tried, so its nomination ends: the
// units of its cohort paused for it would otherwise wait forever.
func TestPreemptHeldBackPreemptorIsNoLongerNominated(t *testing.T) {
	f := preemptionFixture(t, nil)
	f.addUnit(t, makeUnit("p", "team-a", "2").Priority(10).Obj())
	f.pass(t)
	if !f.s.preemptor.isNominated("ns/p") {
		t.Fatal("the preemptor is not nominated")
	}
	f.s.env.queues.Invalidate()
	q := &schedv1alpha1.Queue{}
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: schedv1alpha1.QueueNamespace, Name: "team-a"}, q); err != nil {
		t.Fatal(err)
	}
	q.Annotations = map[string]string{schedv1alpha1.WaitForPodsRunningAnnotation: "true"}
	f.s.queueSync.onQueue(q)
	f.addUnit(t, makeUnit("d", "team-a", "1").Phase(schedv1alpha1.QueueUnitPhaseDequeued).Obj())
	f.pass(t)
	if f.s.preemptor.isNominated("ns/p") {
		t.Fatal("a preemptor held back by its queue is still nominated")
	}
	f.step(t, heldBackRewriteDelay, f.informDue)
	wantWaiting(t, f.get(t, "p"), "WaitingForPodsRunning", "waiting in queue team-a: it admits its next unit once the pods of the unit it admitted last are running")
}

// Without koord-queue/max-priority a unit's priority is capped at 10^9, the
// highest a user-defined PriorityClass may have: a tenant's 2^31-1 does not
// outrank it. A quota's owner may set another ceiling, higher or lower.
func TestPriorityCeilingByDefault(t *testing.T) {
	u := func(p int32) *schedv1alpha1.QueueUnit {
		return utiltesting.MakeQueueUnit("u", "ns").Priority(p).Obj()
	}
	two := int32(2)
	high := int32(2000000000)
	for _, tc := range []struct {
		name     string
		priority int32
		ceiling  *int32
		want     int32
	}{
		{"no ceiling, highest int32", 1<<31 - 1, nil, 1000000000},
		{"no ceiling, within the default", 1000, nil, 1000},
		{"no ceiling, negative", -5, nil, -5},
		{"owner's ceiling below", 1000, &two, 2},
		{"owner's ceiling above the default", 1<<31 - 1, &high, 2000000000},
	} {
		if got := priorityOf(u(tc.priority), tc.ceiling); got != tc.want {
			t.Errorf("%s: priorityOf = %d, want %d", tc.name, got, tc.want)
		}
	}
}
