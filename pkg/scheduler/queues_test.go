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
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queue"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// A Queue's settings come from its spec and annotations; a malformed
// annotation is ignored with an InvalidAnnotation warning naming it.
func TestQueueSyncSettingsFromAnnotations(t *testing.T) {
	for _, tc := range []struct {
		name        string
		queue       *schedv1alpha1.Queue
		want        queue.Settings
		invalid     []string
		wantCeiling *int32
	}{
		{
			name:  "defaults",
			queue: &schedv1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: schedv1alpha1.QueueNamespace}},
			want:  queue.Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority, Threshold: schedv1alpha1.DefaultPriorityThreshold},
		},
		{
			name: "every annotation",
			queue: utiltesting.MakeQueue("q").Policy(schedv1alpha1.QueuePolicyIntelligent).Priority(7).
				Annotation(schedv1alpha1.PriorityThresholdAnnotation, " 9 ").
				Annotation(schedv1alpha1.MaxDepthAnnotation, "20").
				Annotation(schedv1alpha1.PreemptionPolicyAnnotation, "LowerPriority").
				Annotation(schedv1alpha1.MaxWaitAnnotation, "30m").
				Annotation(schedv1alpha1.WaitForPodsRunningAnnotation, "true").
				Annotation(schedv1alpha1.HoldRoomAnnotation, "true").
				Annotation(schedv1alpha1.MaxPriorityAnnotation, "100").Obj(),
			want: queue.Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyIntelligent, Priority: 7, Threshold: 9, MaxDepth: 20,
				Preempt: true, MaxWait: 30 * time.Minute, WaitForPodsRunning: true, HoldRoom: true},
			wantCeiling: ptr.To[int32](100),
		},
		{
			name: "malformed",
			queue: utiltesting.MakeQueue("q").Priority(3).
				Annotation(schedv1alpha1.PriorityThresholdAnnotation, "high").
				Annotation(schedv1alpha1.MaxDepthAnnotation, "-1").
				Annotation(schedv1alpha1.PreemptionPolicyAnnotation, "Always").
				Annotation(schedv1alpha1.MaxWaitAnnotation, "0s").
				Annotation(schedv1alpha1.WaitForPodsRunningAnnotation, "maybe").
				Annotation(schedv1alpha1.HoldRoomAnnotation, "always").
				Annotation(schedv1alpha1.MaxPriorityAnnotation, "lots").Obj(),
			want: queue.Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority, Priority: 3, Threshold: schedv1alpha1.DefaultPriorityThreshold},
			invalid: []string{schedv1alpha1.PriorityThresholdAnnotation, schedv1alpha1.MaxDepthAnnotation, schedv1alpha1.PreemptionPolicyAnnotation,
				schedv1alpha1.MaxWaitAnnotation, schedv1alpha1.WaitForPodsRunningAnnotation, schedv1alpha1.HoldRoomAnnotation, schedv1alpha1.MaxPriorityAnnotation},
		},
		{
			name: "the hold-room field wins over the annotation",
			queue: func() *schedv1alpha1.Queue {
				q := utiltesting.MakeQueue("q").Annotation(schedv1alpha1.HoldRoomAnnotation, "true").Obj()
				q.Spec.HoldRoomForHigherPriority = ptr.To(false)
				return q
			}(),
			want: queue.Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority, Priority: 1000, Threshold: schedv1alpha1.DefaultPriorityThreshold},
		},
		{
			name: "the hold-room field alone",
			queue: func() *schedv1alpha1.Queue {
				q := utiltesting.MakeQueue("q").Annotation(schedv1alpha1.HoldRoomAnnotation, "not-read").Obj()
				q.Spec.HoldRoomForHigherPriority = ptr.To(true)
				return q
			}(),
			want: queue.Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority, Priority: 1000, Threshold: schedv1alpha1.DefaultPriorityThreshold, HoldRoom: true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.addQueue(t, tc.queue)
			got, ok := f.s.env.queues.QueueSettings("q")
			if !ok {
				t.Fatal("the queue is not served")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCeiling, f.s.registry.ceiling("q")); diff != "" {
				t.Errorf("ceiling (-want +got):\n%s", diff)
			}
			events := f.takeEvents()
			for _, a := range tc.invalid {
				if got := eventsWith(events, "Warning InvalidAnnotation annotation "+a+"="); len(got) != 1 {
					t.Errorf("want one InvalidAnnotation event for %s, got %v", a, events)
				}
			}
			if len(events) != len(tc.invalid) {
				t.Errorf("events = %v, want %d", events, len(tc.invalid))
			}
		})
	}
}

// Only Queues in namespace koord-queue are served; another one is ignored
// with a warning and changes nothing.
func TestQueueSyncIgnoresQueuesOutsideItsNamespace(t *testing.T) {
	f := newFixture(t, nil)
	q := utiltesting.MakeQueue("team-a").Obj()
	q.Namespace = "default"
	f.addQueue(t, q)
	if _, ok := f.s.env.queues.QueueSettings("team-a"); ok || f.s.registry.get("team-a") != nil {
		t.Fatal("a Queue outside koord-queue is served")
	}
	if got := eventsWith(f.takeEvents(), "Warning QueueIgnored only Queues in namespace koord-queue are served"); len(got) != 1 {
		t.Fatal("want one QueueIgnored event")
	}
	f.s.queueSync.onQueueDelete(q)
	if len(f.s.env.queues.QueueNames()) != 0 {
		t.Fatal("deleting an ignored Queue changed something")
	}
}

// A Queue whose koord-queue/max-priority changes bounds its units anew: the
// pending units are queued again at their new priority, and the holders are
// charged again so victim selection sees it.
func TestQueueSyncCeilingChangeRequeuesAndRecharges(t *testing.T) {
	f := newFixture(t, nil)
	q := f.addQueue(t, utiltesting.MakeQueue("team-a").Annotation(schedv1alpha1.MaxPriorityAnnotation, "50").Obj())
	f.addUnit(t, makeUnit("p", "team-a", "1").Priority(40).Obj())
	f.addUnit(t, makeUnit("h", "team-a", "1").Priority(40).Phase(schedv1alpha1.QueueUnitPhaseRunning).Obj())
	if u, _ := f.s.env.queues.Get("ns/p"); u == nil || u.Priority != 40 {
		t.Fatalf("pending unit = %+v, want priority 40 under a ceiling of 50", u)
	}
	if c, _ := f.plugin.lastUsage("ns/h"); c.h == nil || c.h.Priority != 40 {
		t.Fatalf("holder charged %+v, want priority 40", c.h)
	}

	lowered := q.DeepCopy()
	lowered.Annotations[schedv1alpha1.MaxPriorityAnnotation] = "10"
	f.s.queueSync.onQueue(lowered)
	if u, _ := f.s.env.queues.Get("ns/p"); u == nil || u.Priority != 10 {
		t.Fatalf("pending unit = %+v, want priority 10 under the new ceiling", u)
	}
	if c, _ := f.plugin.lastUsage("ns/h"); c.h == nil || c.h.Priority != 10 {
		t.Fatalf("holder charged %+v, want priority 10", c.h)
	}

	// The same ceiling again re-queues nothing.
	calls := len(f.plugin.usage)
	f.s.queueSync.onQueue(lowered.DeepCopy())
	if len(f.plugin.usage) != calls {
		t.Fatal("an unchanged ceiling charged the holders again")
	}
	// No ceiling: the units' own priority.
	none := lowered.DeepCopy()
	delete(none.Annotations, schedv1alpha1.MaxPriorityAnnotation)
	f.s.queueSync.onQueue(none)
	if u, _ := f.s.env.queues.Get("ns/p"); u == nil || u.Priority != 40 {
		t.Fatalf("pending unit = %+v, want its own priority 40 without a ceiling", u)
	}
}

// A deleted Queue's units stay pending and say their queue is missing; they
// are admitted when it comes back.
func TestQueueSyncDeletedQueueOrphansItsUnits(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 1)
	q := f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	f.addUnit(t, makeUnit("a", "team-a", "2").Phase(schedv1alpha1.QueueUnitPhaseEnqueued).Obj())
	f.s.queueSync.onQueueDelete(toolscache.DeletedFinalStateUnknown{Key: "koord-queue/team-a", Obj: q})
	if f.s.registry.get("team-a") != nil {
		t.Fatal("the deleted Queue is still registered")
	}
	f.step(t, waitingWriteDelay, f.informDue)
	wantWaiting(t, f.get(t, "a"), "QueueNotFound", "queue team-a not found: the unit is admitted as soon as it exists")
	if got := eventsWith(f.takeEvents(), "Warning QueueNotFound queue team-a not found"); len(got) != 1 {
		t.Fatal("want one QueueNotFound event")
	}

	f.plugin.setCapacity("team-a", 2)
	back := q.DeepCopy()
	back.ResourceVersion = ""
	f.s.queueSync.onQueue(back)
	f.pass(t)
	if got := f.get(t, "a").Status.Phase; got != schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatalf("phase = %s, want admitted once the queue is back", got)
	}
}

// A Queue's status lists its pending units in order and counts the units
// that hold quota; it is written only when it changed.
func TestQueueSyncStatusWrittenOnlyWhenChanged(t *testing.T) {
	f := newFixture(t, nil)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	f.addUnit(t, makeUnit("low", "team-a", "1").Priority(1).Obj())
	f.addUnit(t, makeUnit("high", "team-a", "1").Priority(9).Obj())
	f.addUnit(t, makeUnit("h", "team-a", "1").Phase(schedv1alpha1.QueueUnitPhaseRunning).Obj())
	f.s.queueSync.updateStatuses(f.ctx)

	got := &schedv1alpha1.Queue{}
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: schedv1alpha1.QueueNamespace, Name: "team-a"}, got); err != nil {
		t.Fatal(err)
	}
	want := schedv1alpha1.QueueStatus{Pending: 2, Admitted: 1, QueueItemDetails: []schedv1alpha1.QueueItemDetail{
		{Name: "high", Namespace: "ns", Priority: 9, Position: 1},
		{Name: "low", Namespace: "ns", Priority: 1, Position: 2},
	}}
	if diff := cmp.Diff(want, got.Status); diff != "" {
		t.Fatalf("queue status (-want +got):\n%s", diff)
	}
	if n := f.queuePatches.Load(); n != 1 {
		t.Fatalf("%d Queue writes, want 1", n)
	}
	f.s.queueSync.updateStatuses(f.ctx)
	if n := f.queuePatches.Load(); n != 1 {
		t.Fatalf("%d Queue writes after an unchanged refresh, want 1", n)
	}
	// A unit leaves: written again.
	f.s.intake.onUnitDelete(f.get(t, "low"))
	f.s.queueSync.updateStatuses(f.ctx)
	if n := f.queuePatches.Load(); n != 2 {
		t.Fatalf("%d Queue writes after a change, want 2", n)
	}
}

// Queues whose priority comes from a PriorityClass take its value, read
// again when a class changes (resync); a missing class gives priority 0 with
// a warning.
func TestQueueSyncPriorityFromItsClass(t *testing.T) {
	f := newFixture(t, nil)
	gold := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "gold"}, Value: 500}
	if err := f.c.Create(f.ctx, gold); err != nil {
		t.Fatal(err)
	}
	q := utiltesting.MakeQueue("team-a").Obj()
	q.Spec.Priority, q.Spec.PriorityClassName = nil, "gold"
	f.addQueue(t, q)
	q2 := utiltesting.MakeQueue("team-b").Obj()
	q2.Spec.Priority, q2.Spec.PriorityClassName = nil, "silver"
	f.addQueue(t, q2)
	if got, _ := f.s.env.queues.QueueSettings("team-a"); got.Priority != 500 {
		t.Fatalf("priority = %d, want its class's 500", got.Priority)
	}
	if got, _ := f.s.env.queues.QueueSettings("team-b"); got.Priority != 0 {
		t.Fatalf("priority = %d, want 0 without its class", got.Priority)
	}
	if got := eventsWith(f.takeEvents(), "Warning PriorityClassNotFound priorityClassName silver"); len(got) != 1 {
		t.Fatal("want one PriorityClassNotFound event")
	}

	gold.Value = 700
	if err := f.c.Update(f.ctx, gold); err != nil {
		t.Fatal(err)
	}
	f.s.queueSync.resync()
	if got, _ := f.s.env.queues.QueueSettings("team-a"); got.Priority != 700 {
		t.Fatalf("priority = %d after the class changed, want 700", got.Priority)
	}
}

// A holder whose labels now name another quota "moves nothing"
// (docs/protocol.md): it still counts as admitted by the Queue of the quota
// it is charged to.
func TestQueueSyncRelabelledHolderCountsWhereItWasAdmitted(t *testing.T) {
	f := newFixture(t, nil)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	f.addQueue(t, utiltesting.MakeQueue("team-b").Obj())
	f.addUnit(t, holder("h", schedv1alpha1.QueueUnitPhaseRunning))
	u := f.get(t, "h")
	u.Labels[schedv1alpha1.QuotaNameLabel] = "team-b"
	if err := f.c.Update(f.ctx, u); err != nil {
		t.Fatal(err)
	}
	f.feed(t, "h")
	f.s.queueSync.updateStatuses(f.ctx)
	for name, want := range map[string]int32{"team-a": 1, "team-b": 0} {
		q := &schedv1alpha1.Queue{}
		if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: schedv1alpha1.QueueNamespace, Name: name}, q); err != nil {
			t.Fatal(err)
		}
		if q.Status.Admitted != want {
			t.Errorf("%s: admitted = %d, want %d", name, q.Status.Admitted, want)
		}
	}
}
