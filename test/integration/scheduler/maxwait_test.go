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
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// Under the Priority policy small units keep overtaking a big one that does
// not fit. With koord-queue/max-wait on the quota, once the big unit has
// waited longer the queue reserves for it: it says so, later small units are
// held back, and it is admitted as soon as the running ones have finished.
// Only the fake clock crosses the bound.
func TestMaxWaitReservesForABigUnit(t *testing.T) {
	const ns, q = "max-wait", "max-wait"
	fc := clocktesting.NewFakeClock(time.Now())
	startScheduler(t, withClock(fc))
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota(q).Namespace(ns).Max("cpu", "24").
		Annotation(schedv1alpha1.MaxWaitAnnotation, "1m").Obj())
	waitQueue(t, q)
	small := func(i int) string { return fmt.Sprintf("small-%d", i) }
	for i := range 8 {
		create(t, utiltesting.MakeQueueUnit(small(i), ns).Quota(q).Request("cpu", "1").Obj())
		waitPhase(t, ns, small(i), schedv1alpha1.QueueUnitPhaseDequeued)
	}
	create(t, utiltesting.MakeQueueUnit("big", ns).Quota(q).Request("cpu", "20").Obj())
	waitMessage(t, ns, "big")

	// Before the bound: a small unit overtakes the big one.
	setPhase(t, ns, small(0), schedv1alpha1.QueueUnitPhaseSucceed)
	create(t, utiltesting.MakeQueueUnit(small(8), ns).Quota(q).Request("cpu", "1").Obj())
	waitPhase(t, ns, small(8), schedv1alpha1.QueueUnitPhaseDequeued)

	// The bound passes: the big unit reserves, with nothing else happening.
	fc.Step(2 * time.Minute)
	if err := framework.Eventually(ctx(), 20*time.Second, func(context.Context) (bool, error) {
		return strings.Contains(getUnit(t, ns, "big").Status.Message, "reserving"), nil
	}); err != nil {
		dump(t, ns)
		t.Fatalf("big does not say it reserves: %q", getUnit(t, ns, "big").Status.Message)
	}
	create(t, utiltesting.MakeQueueUnit(small(9), ns).Quota(q).Request("cpu", "1").Obj())
	// It fits, but is held back, and names the unit that reserves the quota.
	u := waitMessage(t, ns, small(9))
	if want := "held back: " + ns + "/big has waited longer than koord-queue/max-wait"; u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued ||
		!strings.Contains(u.Status.Message, want) {
		t.Fatalf("%s: phase %s, message %q; want Enqueued with %q", small(9), u.Status.Phase, u.Status.Message, want)
	}
	// The running small units finish; the big unit gets the room, then the small one.
	for i := 1; i <= 8; i++ {
		setPhase(t, ns, small(i), schedv1alpha1.QueueUnitPhaseSucceed)
	}
	waitPhase(t, ns, "big", schedv1alpha1.QueueUnitPhaseDequeued)
	waitPhase(t, ns, small(9), schedv1alpha1.QueueUnitPhaseDequeued)
}
