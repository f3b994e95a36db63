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
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// checker lists units continuously and records any moment at which the units
// holding quota in a quota add up to more than its max.
type checker struct {
	mu         sync.Mutex
	violations []string
	samples    int
}

func (c *checker) run(ctx context.Context, ns string, max map[string]int64, parent map[string]string) {
	for ctx.Err() == nil {
		list := &schedv1alpha1.QueueUnitList{}
		if err := env.Client.List(ctx, list, client.InNamespace(ns)); err == nil {
			used := map[string]int64{}
			for _, u := range list.Items {
				switch u.Status.Phase {
				case schedv1alpha1.QueueUnitPhaseReserved, schedv1alpha1.QueueUnitPhaseDequeued, schedv1alpha1.QueueUnitPhaseRunning:
					q := u.Spec.Resource["cpu"]
					for quota := u.Labels[schedv1alpha1.QuotaNameLabel]; quota != ""; quota = parent[quota] {
						used[quota] += q.MilliValue()
					}
				}
			}
			c.mu.Lock()
			c.samples++
			for quota, m := range max {
				if used[quota] > m {
					c.violations = append(c.violations, fmt.Sprintf("%s uses %dm cpu, max %dm", quota, used[quota], m))
				}
			}
			c.mu.Unlock()
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// finisher plays the job extension: admitted units run, then succeed.
func finisher(ctx context.Context, ns string) {
	for ctx.Err() == nil {
		list := &schedv1alpha1.QueueUnitList{}
		if err := env.Client.List(ctx, list, client.InNamespace(ns)); err == nil {
			for i := range list.Items {
				u := &list.Items[i]
				if u.Status.Phase == schedv1alpha1.QueueUnitPhaseDequeued && u.Status.LastAllocateTime != nil &&
					time.Since(u.Status.LastAllocateTime.Time) > time.Duration(rand.IntN(200))*time.Millisecond {
					u.Status.Phase = schedv1alpha1.QueueUnitPhaseSucceed
					_ = env.Client.Status().Update(ctx, u)
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Killing the scheduler in the middle of 200 units and starting a new one
// never pushes a quota over its max, and every unit is admitted in the end.
func TestRestartKeepsQuotaWithinMax(t *testing.T) {
	const ns = "restart"
	createNamespace(t, ns)
	max := map[string]int64{}
	parent := map[string]string{}
	create(t, utiltesting.MakeElasticQuota("restart-parent").Namespace(ns).Max("cpu", "8").Obj())
	max["restart-parent"] = 8000
	for i := range 4 {
		name := fmt.Sprintf("restart-%d", i)
		create(t, utiltesting.MakeElasticQuota(name).Namespace(ns).Parent("restart-parent").Max("cpu", "4").Obj())
		max[name] = 4000
		parent[name] = "restart-parent"
	}
	for i := range 200 {
		u := utiltesting.MakeQueueUnit(fmt.Sprintf("u-%03d", i), ns).Quota(fmt.Sprintf("restart-%d", i%4)).
			Request("cpu", resource.NewMilliQuantity(int64(500+250*(i%5)), resource.DecimalSI).String()).Obj()
		create(t, u)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &checker{}
	var wg sync.WaitGroup
	wg.Go(func() { c.run(ctx, ns, max, parent) })
	wg.Go(func() { finisher(ctx, ns) })

	done := func() int {
		list := &schedv1alpha1.QueueUnitList{}
		if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, u := range list.Items {
			if u.Status.Phase == schedv1alpha1.QueueUnitPhaseSucceed {
				n++
			}
		}
		return n
	}
	stop := startScheduler(t)
	if err := framework.Eventually(context.Background(), 60*time.Second, func(context.Context) (bool, error) { return done() >= 60, nil }); err != nil {
		t.Fatalf("only %d done before the restart: %v", done(), err)
	}
	stop()
	startScheduler(t)
	if err := framework.Eventually(context.Background(), 120*time.Second, func(context.Context) (bool, error) { return done() == 200, nil }); err != nil {
		t.Fatalf("only %d of 200 done after the restart: %v", done(), err)
	}
	cancel()
	wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.violations) > 0 {
		t.Errorf("%d of %d samples over max, first: %s", len(c.violations), c.samples, c.violations[0])
	}
	if c.samples < 10 {
		t.Errorf("only %d samples taken", c.samples)
	}
}
