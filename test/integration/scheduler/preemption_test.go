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

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/app"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// fakeExtension plays koord-queue-controllers per docs/protocol.md: admitted
// units run; evicted ones are suspended and go back to Enqueued.
func fakeExtension(ctx context.Context, ns string) {
	for ctx.Err() == nil {
		list := &schedv1alpha1.QueueUnitList{}
		if err := env.Client.List(ctx, list, client.InNamespace(ns)); err == nil {
			for i := range list.Items {
				u := &list.Items[i]
				evicted := meta.IsStatusConditionTrue(u.Status.Conditions, schedv1alpha1.ConditionEvicted)
				switch {
				case evicted && (u.Status.Phase == schedv1alpha1.QueueUnitPhaseDequeued || u.Status.Phase == schedv1alpha1.QueueUnitPhaseRunning):
					u.Status.Phase = schedv1alpha1.QueueUnitPhaseEnqueued
					u.Status.Admissions = nil
					u.Status.PodState = nil
					for _, c := range []string{schedv1alpha1.ConditionQuotaReserved, schedv1alpha1.ConditionAdmitted} {
						meta.SetStatusCondition(&u.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionFalse, Reason: "Evicted", Message: "job suspended"})
					}
					_ = env.Client.Status().Update(ctx, u)
				case !evicted && u.Status.Phase == schedv1alpha1.QueueUnitPhaseDequeued:
					u.Status.Phase = schedv1alpha1.QueueUnitPhaseRunning
					_ = env.Client.Status().Update(ctx, u)
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func phases(t *testing.T, ns string) map[string]schedv1alpha1.QueueUnitPhase {
	t.Helper()
	list := &schedv1alpha1.QueueUnitList{}
	if err := env.Client.List(ctx(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]schedv1alpha1.QueueUnitPhase{}
	for _, u := range list.Items {
		out[u.Name] = u.Status.Phase
	}
	return out
}

func noProtection(o *app.Options) { o.Config.ReclaimProtectionPeriod = &metav1.Duration{} }

// A high-priority unit that does not fit its quota evicts just enough
// lower-priority units of the same quota, and is admitted only once they
// have given their quota back.
func TestPreemptionInsideQuota(t *testing.T) {
	const ns = "preempt"
	reg := prometheus.NewRegistry()
	// The scheduler's clock stamps lastAllocateTime (second precision), which
	// orders the victims: it is stepped between admissions, not slept on.
	fc := clocktesting.NewFakeClock(time.Now())
	startScheduler(t, noProtection, withClock(fc), func(o *app.Options) { o.MetricsRegistry = reg })
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota("pq").Namespace(ns).Max("cpu", "4").
		Annotation(schedv1alpha1.PreemptionPolicyAnnotation, string(schedv1alpha1.PreemptionLowerPriority)).Obj())
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &checker{}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { fakeExtension(runCtx, ns) })
	wg.Go(func() { c.run(runCtx, ns, map[string]int64{"pq": 4000}, nil) })

	for i := range 4 {
		create(t, utiltesting.MakeQueueUnit(fmt.Sprintf("low-%d", i), ns).Quota("pq").Priority(1).Request("cpu", "1").Obj())
		waitPhase(t, ns, fmt.Sprintf("low-%d", i), schedv1alpha1.QueueUnitPhaseRunning)
		// lastAllocateTime has second precision: keep the admission order visible.
		fc.Step(2 * time.Second)
	}
	create(t, utiltesting.MakeQueueUnit("high", ns).Quota("pq").Priority(10).Request("cpu", "2").Obj())
	waitPhase(t, ns, "high", schedv1alpha1.QueueUnitPhaseRunning)

	// The two most recently admitted low units made room; the others still run.
	got := phases(t, ns)
	for name, want := range map[string]schedv1alpha1.QueueUnitPhase{
		"low-0": schedv1alpha1.QueueUnitPhaseRunning, "low-1": schedv1alpha1.QueueUnitPhaseRunning,
		"low-2": schedv1alpha1.QueueUnitPhaseEnqueued, "low-3": schedv1alpha1.QueueUnitPhaseEnqueued,
	} {
		if got[name] != want {
			t.Errorf("%s is %s, want %s", name, got[name], want)
		}
	}
	for _, victim := range []string{"low-2", "low-3"} {
		if err := framework.Eventually(ctx(), 10*time.Second, func(context.Context) (bool, error) {
			return len(events(t, ns, victim, "Preempted")) == 1 && len(events(t, ns, victim, "Reclaimed")) == 1, nil
		}); err != nil {
			t.Errorf("%s: Preempted %d, Reclaimed %d events", victim, len(events(t, ns, victim, "Preempted")), len(events(t, ns, victim, "Reclaimed")))
		}
		u := getUnit(t, ns, victim)
		if cond := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionEvicted); cond == nil || cond.Reason != schedv1alpha1.ReasonPreempted {
			t.Errorf("%s Evicted condition = %+v", victim, cond)
		}
	}
	cancel()
	wg.Wait()
	if len(c.violations) > 0 {
		t.Errorf("quota over max at %d of %d samples: %s", len(c.violations), c.samples, c.violations[0])
	}
	// The metrics saw it all.
	for metric, want := range map[string]float64{
		`koord_queue_evictions_total{kind="preemption",quota="pq"}`:                            2,
		`job_schedule_attempts{queue="pq",result="admitted"}`:                                  5,
		`queueunits_coming_rate_by_job_type{namespace="preempt",status="admitted",type="Job"}`: 5,
		`dequeued_quota_usage_by_quota{quota="pq",resource="cpu"}`:                             4,
		`koord_queue_quota_max{quota="pq",resource="cpu"}`:                                     4,
		`queueunits_by_job_type{namespace="preempt",type="Job"}`:                               5,
	} {
		if got := metricValue(t, reg, metric); got != want {
			t.Errorf("%s = %v, want %v", metric, got, want)
		}
	}
	if metricValue(t, reg, "koord_queue_scheduling_passes_total") == 0 || metricValue(t, reg, `koord_queue_admission_wait_seconds_count{queue="pq"}`) != 5 {
		t.Error("passes or wait-time histogram not recorded")
	}
}

// metricValue reads one sample, written as name{label="value",...} with
// labels in alphabetical order, from a registry.
func metricValue(t *testing.T, reg *prometheus.Registry, sample string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			names := []string{f.GetName()}
			if f.GetType() == dto.MetricType_HISTOGRAM {
				names = []string{f.GetName() + "_count"}
			}
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := names[0]
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			if key != sample {
				continue
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				return m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				return m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return 0
}

// A quota within its min takes back exactly what another quota borrows.
func TestReclaimFromBorrower(t *testing.T) {
	const ns = "reclaim"
	startScheduler(t, noProtection)
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota("rparent").Namespace(ns).Max("cpu", "10").Obj())
	for _, name := range []string{"ra", "rb"} {
		create(t, utiltesting.MakeElasticQuota(name).Namespace(ns).Parent("rparent").Min("cpu", "5").Max("cpu", "10").Obj())
	}
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &checker{}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { fakeExtension(runCtx, ns) })
	wg.Go(func() {
		c.run(runCtx, ns, map[string]int64{"rparent": 10000, "ra": 10000, "rb": 10000}, map[string]string{"ra": "rparent", "rb": "rparent"})
	})
	for i := range 10 {
		create(t, utiltesting.MakeQueueUnit(fmt.Sprintf("a-%d", i), ns).Quota("ra").Request("cpu", "1").Obj())
	}
	for i := range 10 {
		waitPhase(t, ns, fmt.Sprintf("a-%d", i), schedv1alpha1.QueueUnitPhaseRunning)
	}
	create(t, utiltesting.MakeQueueUnit("b-0", ns).Quota("rb").Request("cpu", "5").Obj())
	waitPhase(t, ns, "b-0", schedv1alpha1.QueueUnitPhaseRunning)
	running := 0
	for name, p := range phases(t, ns) {
		if name != "b-0" && p == schedv1alpha1.QueueUnitPhaseRunning {
			running++
		}
	}
	if running != 5 {
		t.Errorf("ra keeps %d running units, want 5 (exactly 5 CPU reclaimed)", running)
	}
	cancel()
	wg.Wait()
	if len(c.violations) > 0 {
		t.Errorf("quota over max at %d of %d samples: %s", len(c.violations), c.samples, c.violations[0])
	}
}
