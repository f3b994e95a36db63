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
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// admissionOrder lists the units of ns in the order they were first seen
// holding quota, polling until ctx ends.
type admissionOrder struct {
	mu    sync.Mutex
	seen  map[string]bool
	order []string
}

func (o *admissionOrder) run(ctx context.Context, ns string) {
	o.seen = map[string]bool{}
	for ctx.Err() == nil {
		list := &schedv1alpha1.QueueUnitList{}
		if err := env.Client.List(ctx, list, client.InNamespace(ns)); err == nil {
			o.mu.Lock()
			for _, u := range list.Items {
				if queueunit.HoldsQuota(u.Status.Phase) && !o.seen[u.Name] {
					o.seen[u.Name] = true
					o.order = append(o.order, u.Name)
				}
			}
			o.mu.Unlock()
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (o *admissionOrder) get() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.order...)
}

// Under the Priority policy, in queues that opt in
// (koord-queue/hold-room-for-higher-priority on their ElasticQuotas), a unit
// of high priority that does not fit its cohort yet holds the room it needs
// there: small units of lower priority
// queued after it, in its own queue and in a sibling's, say they wait behind
// it and are not admitted into that room; it is admitted once enough running
// units finish, and they come after it. A unit above its quota's max holds
// nothing.
func TestHeldRoomKeepsPriorityAcrossSizes(t *testing.T) {
	const ns = "held-room"
	startScheduler(t, noProtection)
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota("hr-parent").Namespace(ns).IsParent(true).Max("cpu", "4").Obj())
	for _, q := range []string{"hr-a", "hr-b"} {
		create(t, utiltesting.MakeElasticQuota(q).Namespace(ns).Parent("hr-parent").Max("cpu", "4").
			Annotation(schedv1alpha1.HoldRoomAnnotation, "true").Obj())
		waitQueue(t, q)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	order := &admissionOrder{}
	c := &checker{}
	wg.Go(func() { order.run(runCtx, ns) })
	wg.Go(func() {
		c.run(runCtx, ns, map[string]int64{"hr-parent": 4000, "hr-a": 4000, "hr-b": 4000}, map[string]string{"hr-a": "hr-parent", "hr-b": "hr-parent"})
	})

	low := func(i int) string { return fmt.Sprintf("low-%d", i) }
	for i := range 4 {
		create(t, utiltesting.MakeQueueUnit(low(i), ns).Quota("hr-b").Priority(1).Request("cpu", "1").Obj())
		waitPhase(t, ns, low(i), schedv1alpha1.QueueUnitPhaseDequeued)
	}
	// Above every max: waits for ever, holds nothing.
	create(t, utiltesting.MakeQueueUnit("huge", ns).Quota("hr-a").Priority(500).Request("cpu", "5").Obj())
	create(t, utiltesting.MakeQueueUnit("big", ns).Quota("hr-a").Priority(100).Request("cpu", "2").Obj())
	waitMessage(t, ns, "big")
	later := []string{"later-a", "later-b"}
	create(t, utiltesting.MakeQueueUnit("later-a", ns).Quota("hr-a").Priority(1).Request("cpu", "1").Obj())
	create(t, utiltesting.MakeQueueUnit("later-b", ns).Quota("hr-b").Priority(1).Request("cpu", "1").Obj())
	// One CPU frees: the later units fit on their own, but not beside the 2
	// CPUs held for big, and say so.
	setPhase(t, ns, low(0), schedv1alpha1.QueueUnitPhaseSucceed)
	for _, name := range later {
		if err := framework.Eventually(ctx(), 20*time.Second, func(context.Context) (bool, error) {
			return strings.Contains(getUnit(t, ns, name).Status.Message, "waits behind "+ns+"/big (priority 100"), nil
		}); err != nil {
			dump(t, ns)
			t.Fatalf("%s does not name the unit it waits behind: %q", name, getUnit(t, ns, name).Status.Message)
		}
	}
	// A second one frees: big fits.
	setPhase(t, ns, low(1), schedv1alpha1.QueueUnitPhaseSucceed)
	waitPhase(t, ns, "big", schedv1alpha1.QueueUnitPhaseDequeued)
	// Then the other low units end and the later ones get the room.
	for i := 2; i < 4; i++ {
		setPhase(t, ns, low(i), schedv1alpha1.QueueUnitPhaseSucceed)
	}
	for _, name := range later {
		waitPhase(t, ns, name, schedv1alpha1.QueueUnitPhaseDequeued)
	}
	if err := framework.Eventually(ctx(), 10*time.Second, func(context.Context) (bool, error) {
		return len(order.get()) == 7, nil
	}); err != nil {
		t.Fatalf("admissions seen: %v, want 7", order.get())
	}
	cancel()
	wg.Wait()
	got := order.get()
	if got[4] != "big" {
		t.Errorf("admission order %v: want big right after the four low units", got)
	}
	if u := getUnit(t, ns, "huge"); u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued || !strings.Contains(u.Status.Message, "can never fit") {
		t.Errorf("huge: phase %s, message %q", u.Status.Phase, u.Status.Message)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.samples == 0 {
		t.Fatal("the quota checker took no sample")
	}
	if len(c.violations) > 0 {
		t.Errorf("quota over max at %d of %d samples: %s", len(c.violations), c.samples, c.violations[0])
	}
}

// Without the opt-in, Priority skips what does not fit (the issue's
// numbers): in a quota of max 4 CPU with a 2-CPU unit of priority 1 running,
// a 4-CPU unit of priority 100 waits, and a 1-CPU unit of priority 1 created
// after it is admitted; nothing says it waits behind the big one.
func TestPriorityPassesABigUnitByDefault(t *testing.T) {
	const ns = "held-room-off"
	startScheduler(t, noProtection)
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota("hro").Namespace(ns).Max("cpu", "4").Obj())
	waitQueue(t, "hro")
	create(t, utiltesting.MakeQueueUnit("running", ns).Quota("hro").Priority(1).Request("cpu", "2").Obj())
	waitPhase(t, ns, "running", schedv1alpha1.QueueUnitPhaseDequeued)
	create(t, utiltesting.MakeQueueUnit("big", ns).Quota("hro").Priority(100).Request("cpu", "4").Obj())
	waitMessage(t, ns, "big")
	create(t, utiltesting.MakeQueueUnit("small", ns).Quota("hro").Priority(1).Request("cpu", "1").Obj())
	waitPhase(t, ns, "small", schedv1alpha1.QueueUnitPhaseDequeued)
	if u := getUnit(t, ns, "big"); u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued || !strings.Contains(u.Status.Message, "insufficient quota") {
		t.Errorf("big: phase %s, message %q; want it waiting for quota", u.Status.Phase, u.Status.Message)
	}
}
