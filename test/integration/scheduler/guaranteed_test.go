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
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// Room freed in a quota's min goes back to that quota's waiting unit, not
// to a sibling that would borrow it: the sibling's unit would be reclaimed
// at once. Each round frees the room again; queues of equal priority take
// turns in a rotating order, so rounds cover both orders.
func TestFreedRoomGoesToTheQuotaBelowItsMin(t *testing.T) {
	const ns = "guaranteed-first"
	cohortOfTwo(t, ns, false, "gf-parent", "gf-x", "gf-y")
	create(t, utiltesting.MakeQueueUnit("gf-x0", ns).Quota("gf-x").Request("cpu", "2").Obj())
	waitPhase(t, ns, "gf-x0", schedv1alpha1.QueueUnitPhaseDequeued)
	create(t, utiltesting.MakeQueueUnit("gf-y0", ns).Quota("gf-y").Request("cpu", "2").Obj())
	waitPhase(t, ns, "gf-y0", schedv1alpha1.QueueUnitPhaseDequeued)
	// The parent is full; gf-x1 could only borrow gf-y's min.
	create(t, utiltesting.MakeQueueUnit("gf-x1", ns).Quota("gf-x").Request("cpu", "2").Obj())
	waitMessage(t, ns, "gf-x1")

	const rounds = 4
	for i := range rounds {
		next := fmt.Sprintf("gf-y%d", i+1)
		create(t, utiltesting.MakeQueueUnit(next, ns).Quota("gf-y").Request("cpu", "2").Obj())
		waitMessage(t, ns, next)
		setPhase(t, ns, fmt.Sprintf("gf-y%d", i), schedv1alpha1.QueueUnitPhaseSucceed)
		waitPhase(t, ns, next, schedv1alpha1.QueueUnitPhaseDequeued)
	}
	if p := getUnit(t, ns, "gf-x1").Status.Phase; p == schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatalf("gf-x1 is %s, want it waiting", p)
	}
	// Judge the events once they are all written: one Scheduled per
	// admission of gf-x0 and gf-y0..gf-y4, at least.
	for _, e := range scheduledEvents(t, ns, 2+rounds) {
		if e.InvolvedObject.Name == "gf-x1" && (e.Reason == "Scheduled" || e.Reason == "Preempted") {
			dump(t, ns)
			t.Errorf("gf-x1 was admitted into room gf-y is guaranteed: event %s: %s", e.Reason, e.Message)
		}
	}
}

// Room held for a waiting unit of higher priority (the queues opt in) does not keep a sibling
// quota from its min when that unit would borrow: the sibling would reclaim
// the room at once, and every round would end in an eviction.
func TestHeldRoomYieldsToTheQuotaBelowItsMin(t *testing.T) {
	const ns = "held-yields"
	cohortOfTwo(t, ns, true, "hy-parent", "hy-x", "hy-y")
	// hy-x is at its min: hy-x1 could only borrow, and it holds room above
	// the units of priority 100 of hy-y.
	create(t, utiltesting.MakeQueueUnit("hy-x0", ns).Quota("hy-x").Priority(200).Request("cpu", "2").Obj())
	waitPhase(t, ns, "hy-x0", schedv1alpha1.QueueUnitPhaseDequeued)
	create(t, utiltesting.MakeQueueUnit("hy-y0", ns).Quota("hy-y").Priority(100).Request("cpu", "2").Obj())
	waitPhase(t, ns, "hy-y0", schedv1alpha1.QueueUnitPhaseDequeued)
	create(t, utiltesting.MakeQueueUnit("hy-x1", ns).Quota("hy-x").Priority(200).Request("cpu", "2").Obj())
	waitMessage(t, ns, "hy-x1")

	const rounds = 4
	for i := range rounds {
		next := fmt.Sprintf("hy-y%d", i+1)
		create(t, utiltesting.MakeQueueUnit(next, ns).Quota("hy-y").Priority(100).Request("cpu", "2").Obj())
		waitMessage(t, ns, next)
		setPhase(t, ns, fmt.Sprintf("hy-y%d", i), schedv1alpha1.QueueUnitPhaseSucceed)
		waitPhase(t, ns, next, schedv1alpha1.QueueUnitPhaseDequeued)
	}
	if p := getUnit(t, ns, "hy-x1").Status.Phase; p == schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatalf("hy-x1 is %s, want it waiting", p)
	}
	for _, e := range scheduledEvents(t, ns, 2+rounds) {
		if e.Reason == "Preempted" || (e.InvolvedObject.Name == "hy-x1" && e.Reason == "Scheduled") {
			dump(t, ns)
			t.Errorf("%s: event %s: %s", e.InvolvedObject.Name, e.Reason, e.Message)
		}
	}
}

// scheduledEvents waits until ns has at least want Scheduled events and
// returns all of its events then: fewer would be too few to judge by.
func scheduledEvents(t *testing.T, ns string, want int) []corev1.Event {
	t.Helper()
	evs := &corev1.EventList{}
	scheduled := 0
	if err := framework.Eventually(ctx(), 20*time.Second, func(c context.Context) (bool, error) {
		if err := env.Client.List(c, evs, client.InNamespace(ns)); err != nil {
			return false, err
		}
		scheduled = 0
		for _, e := range evs.Items {
			if e.Reason == "Scheduled" {
				scheduled++
			}
		}
		return scheduled >= want, nil
	}); err != nil {
		t.Fatalf("%d Scheduled events, want at least %d: too few events to judge", scheduled, want)
	}
	return evs.Items
}

// cohortOfTwo starts the scheduler and makes, in a new namespace ns, a parent
// quota of 4 CPU over children of min 2 and max 4 each, with their Queues;
// hold opts the children's Queues into holding room for higher priority.
func cohortOfTwo(t *testing.T, ns string, hold bool, parent string, children ...string) {
	t.Helper()
	startScheduler(t, noProtection)
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota(parent).Namespace(ns).Max("cpu", "4").Obj())
	for _, name := range children {
		eq := utiltesting.MakeElasticQuota(name).Namespace(ns).Parent(parent).Min("cpu", "2").Max("cpu", "4")
		if hold {
			eq.Annotation(schedv1alpha1.HoldRoomAnnotation, "true")
		}
		create(t, eq.Obj())
		waitQueue(t, name)
	}
}
