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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// A new unit is put in its queue at once, and gets phase Enqueued only after
// enqueueWriteDelay: a unit admitted meanwhile is written once.
func TestIntakeNewUnitIsEnqueuedAndMarkedAfterTheDelay(t *testing.T) {
	f := newFixture(t, nil)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())

	f.addUnit(t, makeUnit("a", "team-a", "1").Obj())
	if !f.pendingIn("team-a", "ns/a") {
		t.Fatal("the new unit is not in its queue")
	}
	f.step(t, enqueueWriteDelay-time.Millisecond, nil)
	if got := f.get(t, "a").Status.Phase; got != schedv1alpha1.QueueUnitPhaseNone {
		t.Fatalf("phase = %q before the delay ended", got)
	}
	f.step(t, time.Millisecond, f.informDue)
	u := f.get(t, "a")
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued || u.Status.LastUpdateTime == nil {
		t.Fatalf("status = %+v, want Enqueued with its time", u.Status)
	}
	if !u.Status.LastUpdateTime.Time.Equal(testStart.Add(enqueueWriteDelay).Truncate(time.Second)) {
		t.Errorf("lastUpdateTime = %v, want the fake clock's time", u.Status.LastUpdateTime)
	}
	if f.patches != 1 {
		t.Errorf("%d writes, want 1", f.patches)
	}
	// Seen back, nothing more is written.
	f.feed(t, "a")
	f.drain(t)
	if f.patches != 1 {
		t.Errorf("%d writes after the unit came back, want 1", f.patches)
	}
}

// A new unit admitted in the pass right after it arrived is written once,
// as admitted: its Enqueued write is replaced.
func TestIntakeUnitAdmittedAtOnceIsWrittenOnce(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 4)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	f.addUnit(t, makeUnit("a", "team-a", "1").Obj())
	f.pass(t)
	f.step(t, enqueueWriteDelay, nil)
	if got := f.get(t, "a").Status.Phase; got != schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatalf("phase = %s, want Dequeued", got)
	}
	if f.patches != 1 {
		t.Fatalf("%d writes, want the admission alone", f.patches)
	}
}

// Units that cannot be in a queue say why, with the condition reason of
// docs/protocol.md, about a second after they were seen, and are not queued.
func TestIntakeReasonsAUnitCannotWait(t *testing.T) {
	for _, tc := range []struct {
		name   string
		unit   *schedv1alpha1.QueueUnit
		reason string
		prefix string
		event  string
	}{
		{"inactive", makeUnit("a", "team-a", "1").Active(false).Obj(), "Inactive",
			"inactive: spec.active is false; the unit is not admitted until it is set back to true", "FailedScheduling"},
		{"budget used up", func() *schedv1alpha1.QueueUnit {
			u := makeUnit("a", "team-a", "1").Obj()
			u.Spec.MaximumExecutionTimeSeconds = ptr.To[int32](60)
			u.Status.Phase = schedv1alpha1.QueueUnitPhaseEnqueued
			u.Status.AccumulatedPastExecutionTimeSeconds = ptr.To[int32](60)
			return u
		}(), "ExecutionBudgetUsedUp", "execution budget used up: raise spec.maximumExecutionTimeSeconds", "FailedScheduling"},
		{"no quota", utiltesting.MakeQueueUnit("a", "ns").Request("cpu", "1").Obj(), "NoQuota",
			"no quota: the unit names no ElasticQuota", "FailedScheduling"},
		{"queue not found", makeUnit("a", "team-x", "1").Obj(), "QueueNotFound",
			"queue team-x not found: the unit is admitted as soon as it exists", "QueueNotFound"},
		{"invalid request", func() *schedv1alpha1.QueueUnit {
			u := makeUnit("a", "team-a", "1").Obj()
			u.Spec.Resource[corev1.ResourceCPU] = resource.MustParse("-1")
			return u
		}(), "InvalidRequest", "never fits: invalid request: spec.resource", "FailedScheduling"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(o *Options) {
				o.Gates.QueueUnitActive = true
				o.Gates.MaximumExecutionTime = true
			})
			f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
			f.addUnit(t, tc.unit)
			for _, name := range []schedtypes.QueueName{"team-a", "team-x"} {
				if f.pendingIn(name, "ns/a") {
					t.Fatalf("the unit waits in queue %s", name)
				}
			}
			f.step(t, waitingWriteDelay, f.informDue)
			u := f.get(t, "a")
			wantWaiting(t, u, tc.reason, tc.prefix)
			if u.Status.Attempts != 1 {
				t.Errorf("attempts = %d, want the refusal counted", u.Status.Attempts)
			}
			if got := eventsWith(f.takeEvents(), "Warning "+tc.event+" "+tc.prefix); len(got) != 1 {
				t.Errorf("want one Warning %s event with the text", tc.event)
			}
			// Seen again unchanged: nothing more is written.
			patches := f.patches
			f.feed(t, "a")
			f.step(t, waitingWriteDelay, nil)
			if f.patches != patches {
				t.Errorf("the same reason was written again")
			}
		})
	}
}

// A unit whose queue is missing waits as an orphan and is admitted as soon
// as the Queue exists.
func TestIntakeOrphanIsQueuedWhenItsQueueComes(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 4)
	f.addUnit(t, makeUnit("a", "team-a", "1").Obj())
	if got := f.s.env.queues.Orphans()["team-a"]; len(got) != 1 || got[0] != "ns/a" {
		t.Fatalf("orphans = %v, want ns/a waiting for team-a", got)
	}
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	f.pass(t)
	if got := f.get(t, "a").Status.Phase; got != schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatalf("phase = %s, want admitted once its queue exists", got)
	}
}

// A unit that held quota and comes back pending (the extension finished its
// eviction) gives its quota back, is recorded as Reclaimed, and waits again.
func TestIntakeHolderBackInQueueIsReclaimed(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 8)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	f.addUnit(t, holder("a", schedv1alpha1.QueueUnitPhaseRunning))
	if h, ok := f.plugin.chargedTo("ns/a"); !ok || h.Used["cpu"] != 4000 {
		t.Fatalf("the running unit is charged %+v, want 4 CPUs", h)
	}
	if f.pendingIn("team-a", "ns/a") {
		t.Fatal("a running unit waits in its queue")
	}
	f.takeEvents()

	f.extension(t, "a", func(u *schedv1alpha1.QueueUnit) {
		u.Status.Phase = schedv1alpha1.QueueUnitPhaseEnqueued
		u.Status.Admissions, u.Status.ReclaimablePods = nil, nil
	})
	if _, ok := f.plugin.chargedTo("ns/a"); ok {
		t.Fatal("the unit back in its queue is still charged")
	}
	if !f.pendingIn("team-a", "ns/a") {
		t.Fatal("the unit back in its queue does not wait there")
	}
	want := "Normal Reclaimed Resources released; the unit is back in queue team-a"
	if got := eventsWith(f.takeEvents(), want); len(got) != 1 {
		t.Fatalf("want one event %q", want)
	}
	// The next update of the waiting unit is no second reclaim.
	f.feed(t, "a")
	if got := eventsWith(f.takeEvents(), "Reclaimed"); len(got) != 0 {
		t.Fatalf("reclaimed twice: %v", got)
	}
}

// A follower records nothing and writes nothing; what it saw is written
// once it leads (resyncAll).
func TestIntakeFollowerWritesNothingUntilItLeads(t *testing.T) {
	f := newFixture(t, nil)
	f.s.env.leading.Store(false)
	f.addUnit(t, makeUnit("a", "team-x", "1").Obj())
	f.step(t, time.Minute, nil)
	if f.patches != 0 || len(f.takeEvents()) != 0 {
		t.Fatalf("a follower wrote %d times or recorded events", f.patches)
	}
	f.s.env.leading.Store(true)
	f.s.intake.resyncAll()
	f.step(t, waitingWriteDelay, f.informDue)
	wantWaiting(t, f.get(t, "a"), "QueueNotFound", "queue team-x not found")
}

// Units deleted, or being deleted, leave their queue; a deleted holder's
// charge is forgotten.
func TestIntakeDeletedUnitsLeaveTheQueue(t *testing.T) {
	f := newFixture(t, nil)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	a := f.addUnit(t, makeUnit("a", "team-a", "1").Obj())
	b := f.addUnit(t, makeUnit("b", "team-a", "1").Obj())
	c := f.addUnit(t, makeUnit("c", "team-a", "1").Obj())
	h := f.addUnit(t, holder("h", schedv1alpha1.QueueUnitPhaseRunning))

	f.s.intake.onUnitDelete(a)
	f.s.intake.onUnitDelete(toolscache.DeletedFinalStateUnknown{Key: "ns/b", Obj: b})
	being := c.DeepCopy()
	now := metav1.NewTime(testStart)
	being.DeletionTimestamp = &now
	f.s.intake.onUnit(being)
	for _, key := range []schedtypes.UnitKey{"ns/a", "ns/b", "ns/c"} {
		if f.pendingIn("team-a", key) {
			t.Errorf("%s still waits in its queue", key)
		}
	}
	if u, _ := f.s.cache.object("ns/a"); u != nil {
		t.Error("a deleted unit is still in the cache")
	}
	// A holder being deleted keeps its charge until it is gone.
	beingHeld := h.DeepCopy()
	beingHeld.DeletionTimestamp = &now
	f.s.intake.onUnit(beingHeld)
	if _, ok := f.plugin.chargedTo("ns/h"); !ok {
		t.Fatal("a holder being deleted gave its charge back before it was gone")
	}
	f.s.intake.onUnitDelete(beingHeld)
	if _, ok := f.plugin.chargedTo("ns/h"); ok {
		t.Fatal("a deleted holder is still charged")
	}
	// A pass finds nothing to admit and nothing stale to report.
	f.pass(t)
	if r, _, _ := f.plugin.counts(); r != 0 {
		t.Fatalf("%d reservations, want none", r)
	}
}

// A unit whose labels name another quota while it holds quota stays charged
// where it was admitted, and the user is told once.
func TestIntakeQuotaChangeIgnoredWhileHolding(t *testing.T) {
	f := newFixture(t, nil)
	f.addUnit(t, holder("a", schedv1alpha1.QueueUnitPhaseRunning))
	f.takeEvents()
	relabel := func(q string) {
		u := f.get(t, "a")
		u.Labels[schedv1alpha1.QuotaNameLabel] = q
		if err := f.c.Update(f.ctx, u); err != nil {
			t.Fatal(err)
		}
		f.feed(t, "a")
	}
	relabel("team-b")
	relabel("team-b")
	want := "Warning QuotaChangeIgnored the unit stays charged to quota team-a while it holds quota; quota team-b applies when it is queued again"
	if got := eventsWith(f.takeEvents(), want); len(got) != 1 {
		t.Fatalf("want one event %q", want)
	}
	if h, _ := f.plugin.chargedTo("ns/a"); h.Quota != "team-a" {
		t.Fatalf("charged to %q, want team-a", h.Quota)
	}
}
