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
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// A hand-made unit asking more than an int64 can count (read as zero before)
// is never admitted, and says why.
func TestOverflowingUnitNeverFits(t *testing.T) {
	const ns, q = "overflow", "overflow"
	startScheduler(t)
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota(q).Namespace(ns).Max("cpu", "4").Obj())
	create(t, utiltesting.MakeQueueUnit("huge", ns).Quota(q).Request("cpu", "1e30").Obj())
	u := waitMessage(t, ns, "huge")
	if !strings.Contains(u.Status.Message, "never fits: invalid request") || !strings.Contains(u.Status.Message, "1e30") {
		t.Errorf("huge waits with %q, want the invalid request", u.Status.Message)
	}
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued {
		t.Errorf("huge is %s", u.Status.Phase)
	}
}

// A deleted unit keeps its quota while a finalizer holds it (the extension's
// finalizer waits for the job's pods): nothing else is admitted into it.
func TestDeletedUnitHoldsQuotaUntilGone(t *testing.T) {
	const ns, q = "deleting", "deleting"
	startScheduler(t)
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota(q).Namespace(ns).Max("cpu", "4").Obj())
	runCtx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { fakeExtension(runCtx, ns) })

	first := utiltesting.MakeQueueUnit("first", ns).Quota(q).Request("cpu", "4").Obj()
	first.Finalizers = []string{"test.koord-queue/pods-terminating"}
	create(t, first)
	waitPhase(t, ns, "first", schedv1alpha1.QueueUnitPhaseRunning)
	if err := env.Client.Delete(ctx(), getUnit(t, ns, "first")); err != nil {
		t.Fatal(err)
	}
	create(t, utiltesting.MakeQueueUnit("second", ns).Quota(q).Request("cpu", "4").Obj())
	u := waitMessage(t, ns, "second")
	if !strings.Contains(u.Status.Message, "insufficient quota") || u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued {
		t.Fatalf("second is %s (%q) while first's pods terminate", u.Status.Phase, u.Status.Message)
	}

	// The pods are gone: the finalizer goes, and so does the charge.
	if err := framework.Eventually(ctx(), 10*time.Second, func(c context.Context) (bool, error) {
		cur := getUnit(t, ns, "first")
		cur.Finalizers = nil
		return true, env.Client.Update(c, cur)
	}); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, ns, "second", schedv1alpha1.QueueUnitPhaseRunning)
	if err := env.Client.Get(ctx(), client.ObjectKey{Namespace: ns, Name: "first"}, &schedv1alpha1.QueueUnit{}); client.IgnoreNotFound(err) != nil || err == nil {
		t.Errorf("first still there: %v", err)
	}
}
