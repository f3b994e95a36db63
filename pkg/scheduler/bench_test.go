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
	"maps"
	goruntime "runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/plugins/elasticquota"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/plugins/priority"
	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// Benchmarks of the real scheduling path: the scheduler as build() makes it,
// with the plugins of the binary (Priority, ElasticQuotaV2 and its quota
// tree and victim search), the real queue manager and the real try. Only
// the API is fake (controller-runtime's fake client and fake informers) and
// the clock; API calls are kept out of the timings.
//
// The shape follows the performance configs: parents (cohorts) with child
// quotas under them, one Queue per child quota (preemption LowerPriority),
// and units of the three classes of test/performance (1, 5 and 20 CPU at
// priorities 50, 100 and 200).

// benchClass is a class of unit: its CPU (cores) and priority.
type benchClass struct {
	cpu      int64
	priority int32
}

var benchClasses = []benchClass{{1, 50}, {5, 100}, {20, 200}}

// benchWorld is the scheduler under benchmark and its fake API.
type benchWorld struct {
	s   *Scheduler
	c   client.Client
	clk *clocktesting.FakeClock
	ctx context.Context

	parents, children int
	// classes are the shapes new units take, in turn.
	classes []benchClass

	mu sync.Mutex
	// patched are the units the scheduler wrote since the last take.
	patched map[string]bool
	// holders are the units holding quota, oldest admission first.
	holders []string
	holding map[string]bool
	next    int
}

// newBenchWorld builds parents x children quotas (parent max 200 CPU, child
// min 2 and max 100, as `large`), one Queue per child, pending units per
// child, and admits until every cohort is full.
func newBenchWorld(b testing.TB, parents, children, pendingPerChild int, classes []benchClass) *benchWorld {
	b.Helper()
	w := &benchWorld{clk: clocktesting.NewFakeClock(testStart), ctx: context.Background(), parents: parents, children: children,
		classes: classes, patched: map[string]bool{}, holding: map[string]bool{}}
	sch := scheme.New()
	// The plain object tracker: the field-managed one builds a REST mapper
	// per create, which would make the setup take minutes.
	w.c = fake.NewClientBuilder().WithScheme(sch).
		WithObjectTracker(clienttesting.NewObjectTracker(sch, serializer.NewCodecFactory(sch).UniversalDecoder())).
		WithStatusSubresource(&schedv1alpha1.QueueUnit{}, &schedv1alpha1.Queue{}).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				if u, ok := sentUnit(obj, patch).(*schedv1alpha1.QueueUnit); ok {
					w.mu.Lock()
					w.patched[u.Name] = true
					w.mu.Unlock()
				}
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
		}).Build()
	informers := &informertest.FakeInformers{Scheme: sch}
	cfg := &configv1.KoordQueueConfiguration{
		Plugins:       []configv1.Plugin{{Name: configv1.PluginPriority}, {Name: configv1.PluginElasticQuotaV2}},
		PluginConfigs: []configv1.PluginConfig{{Name: configv1.PluginElasticQuotaV2, Args: runtime.RawExtension{Raw: []byte(`{"reclaimProtectionPeriod":"0s"}`)}}},
	}
	cfg.SetDefaults()
	registry := framework.Registry{configv1.PluginPriority: priority.New, configv1.PluginElasticQuotaV2: elasticquota.New}
	s, err := build(deps{client: w.c, reader: w.c, informers: informers, recorder: &record.FakeRecorder{}}, registry, Options{Config: cfg, Clock: w.clk})
	if err != nil {
		b.Fatal(err)
	}
	s.writer.decide.ShutDown()
	s.writer.inform.ShutDown()
	s.writer.decide, s.writer.inform = newClockQueue(w.clk), newClockQueue(w.clk)
	s.env.leading.Store(true)
	b.Cleanup(func() {
		s.writer.decide.ShutDown()
		s.writer.inform.ShutDown()
		s.lifecycle.queue.ShutDown()
	})
	w.s = s

	eqs, err := informers.FakeInformerFor(w.ctx, &eqv1alpha1.ElasticQuota{})
	if err != nil {
		b.Fatal(err)
	}
	for p := range parents {
		eqs.Add(utiltesting.MakeElasticQuota(benchParent(p)).Namespace("ns").IsParent(true).Max(corev1.ResourceCPU, "200").Obj())
		for c := range children {
			name := benchChild(p, c)
			eqs.Add(utiltesting.MakeElasticQuota(name).Namespace("ns").Parent(benchParent(p)).
				Min(corev1.ResourceCPU, "2").Max(corev1.ResourceCPU, "100").Obj())
			q := utiltesting.MakeQueue(name).Obj()
			q.Spec.PreemptionPolicy = schedv1alpha1.PreemptionLowerPriority
			w.s.queueSync.onQueue(q)
		}
	}
	for p := range parents {
		for c := range children {
			for range pendingPerChild {
				w.newUnit(b, benchChild(p, c))
			}
		}
	}
	// Fill every cohort: admit until a pass admits nothing.
	for range 100 {
		if w.cycle(b) == 0 {
			break
		}
	}
	return w
}

func benchParent(p int) string   { return fmt.Sprintf("parent-%d", p) }
func benchChild(p, c int) string { return fmt.Sprintf("child-%d-%d", p, c) }
func (w *benchWorld) cohort(p int) schedtypes.CohortName {
	return schedtypes.CohortName(benchParent(p))
}

// newUnit creates a pending unit in quota q, of the next class, and hands it
// to the scheduler as the informer would.
func (w *benchWorld) newUnit(b testing.TB, q string) {
	b.Helper()
	cl := w.classes[w.next%len(w.classes)]
	u := utiltesting.MakeQueueUnit(fmt.Sprintf("u-%06d", w.next), "ns").Quota(q).Request(corev1.ResourceCPU, fmt.Sprint(cl.cpu)).
		Priority(cl.priority).Created(testStart.Add(time.Duration(w.next) * time.Millisecond)).Obj()
	w.next++
	if err := w.c.Create(w.ctx, u); err != nil {
		b.Fatal(err)
	}
	w.s.intake.onUnit(u)
}

// cycle runs one pass, makes its decision writes and plays the extension on
// what was written: admitted units hold their quota, evicted ones go back to
// the queue. It returns the number of admissions.
func (w *benchWorld) cycle(b testing.TB) int {
	b.Helper()
	w.s.pass.schedule(w.ctx)
	return w.settle(b)
}

// settle makes the writes the last pass caused and feeds them back.
func (w *benchWorld) settle(b testing.TB) int {
	b.Helper()
	for w.s.writer.decide.Len() > 0 {
		w.s.writer.processNext(w.ctx, w.s.writer.decide, false)
	}
	w.mu.Lock()
	names := w.patched
	w.patched = map[string]bool{}
	w.mu.Unlock()
	admitted := 0
	now := metav1.NewTime(w.clk.Now())
	// In name order, so two worlds fed the same events see them alike.
	for _, name := range slices.Sorted(maps.Keys(names)) {
		u := &schedv1alpha1.QueueUnit{}
		if err := w.c.Get(w.ctx, client.ObjectKey{Namespace: "ns", Name: name}, u); err != nil {
			b.Fatal(err)
		}
		if queueunit.IsEvicting(u) {
			queueunit.Requeue(u, queueunit.ReasonRequeued, "evicted", now)
			if err := w.c.Status().Update(w.ctx, u); err != nil {
				b.Fatal(err)
			}
		}
		w.s.intake.onUnit(u)
		if queueunit.HoldsQuota(u.Status.Phase) && !w.holding[name] {
			w.holding[name] = true
			w.holders = append(w.holders, name)
			admitted++
		}
	}
	return admitted
}

// finishOldest ends the oldest holder's job through the API (untimed) and
// returns the object the informer would deliver; a new unit of the same
// quota arrives so the pending work stays the same.
func (w *benchWorld) finishOldest(b testing.TB) *schedv1alpha1.QueueUnit {
	b.Helper()
	return w.finishHolder(b, 0)
}

// finishHolder is finishOldest for the i-th holder in admission order (the
// oldest still holding past it if it was evicted meanwhile).
func (w *benchWorld) finishHolder(b testing.TB, i int) *schedv1alpha1.QueueUnit {
	b.Helper()
	for i < len(w.holders) {
		name := w.holders[i]
		w.holders = slices.Delete(w.holders, i, i+1)
		delete(w.holding, name)
		u := &schedv1alpha1.QueueUnit{}
		if err := w.c.Get(w.ctx, client.ObjectKey{Namespace: "ns", Name: name}, u); err != nil {
			b.Fatal(err)
		}
		if !queueunit.HoldsQuota(u.Status.Phase) {
			continue // evicted and requeued meanwhile
		}
		queueunit.MarkFinished(u, false, "done", metav1.NewTime(w.clk.Now()))
		if err := w.c.Status().Update(w.ctx, u); err != nil {
			b.Fatal(err)
		}
		w.newUnit(b, u.Labels[schedv1alpha1.QuotaNameLabel])
		return u
	}
	b.Fatal("no unit holds quota")
	return nil
}

// BenchmarkAdmission is the cost per admission as the number of queues
// grows: each op, the oldest holder finishes (one cohort among many gets
// room back), a unit arrives in its place, and a pass runs. Timed: the
// scheduler handling the finished unit and the pass; not timed: the API.
func BenchmarkAdmission(b *testing.B) {
	for _, size := range []struct{ parents, children int }{{5, 6}, {10, 100}} {
		b.Run(fmt.Sprintf("queues=%d", size.parents*size.children), func(b *testing.B) {
			// The pass runs on this goroutine's own thread, so that the
			// thread's CPU time is the pass's alone (see threadCPU).
			goruntime.LockOSThread()
			defer goruntime.UnlockOSThread()
			w := newBenchWorld(b, size.parents, size.children, 20, benchClasses)
			admitted := 0
			// The process's CPU time over the timed parts too: on shared
			// cores it varies less with the load than the wall time.
			var cpu, own time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				w.clk.Step(100 * time.Millisecond)
				done := w.finishOldest(b)
				b.StartTimer()
				start, ownStart := processCPU(b), threadCPU(b)
				w.s.intake.onUnit(done)
				w.s.pass.schedule(w.ctx)
				cpu += processCPU(b) - start
				own += threadCPU(b) - ownStart
				b.StopTimer()
				admitted += w.settle(b)
				b.StartTimer()
			}
			if admitted == 0 {
				b.Fatal("nothing admitted")
			}
			b.ReportMetric(float64(admitted)/float64(b.N), "admissions/op")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(admitted), "ns/admission")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(admitted), "cpu-ns/admission")
			b.ReportMetric(float64(own.Nanoseconds())/float64(admitted), "pass-cpu-ns/admission")
		})
	}
}

// threadCPU is the CPU time the calling thread has used. Locked to it,
// the benchmark's goroutine is all that runs there: its own code and the
// garbage collection its allocations are made to assist with, but not the
// collector's background work, which also runs while the pass does and is
// left over from the untimed fake API's far larger allocations.
func threadCPU(b *testing.B) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

// processCPU is the CPU time the process has used (user and system).
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPassNothingNew is a pass when nothing happened since the last
// one, at 1,000 queues with 20 waiting units each.
func BenchmarkPassNothingNew(b *testing.B) {
	w := newBenchWorld(b, 10, 100, 20, benchClasses)
	w.cycle(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w.s.pass.schedule(w.ctx)
	}
}

// BenchmarkPassFreedCohort is a pass after one cohort among ten was told it
// changed (as when a nomination ends) without room for anyone: its 100
// queues are worth a look, the other 900 are not. shapes is the number of
// request shapes in each queue (mixed shapes cannot answer each other).
func BenchmarkPassFreedCohort(b *testing.B) {
	for _, shapes := range []int{1, 3} {
		b.Run(fmt.Sprintf("shapes=%d", shapes), func(b *testing.B) {
			w := newBenchWorld(b, 10, 100, 20, benchClasses[:shapes])
			w.cycle(b)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				w.s.env.queues.Freed(w.cohort(i % w.parents))
				w.s.pass.schedule(w.ctx)
			}
		})
	}
}

// BenchmarkTryVictimSearch is the real try of a unit that does not fit and
// whose victim search finds nobody to evict (every holder of its cohort has
// its priority or more), at 1,000 quotas: the filter, the search over the
// cohort's holdings and the refusal. The clock moves past the memory of
// fruitless searches before each try, so each one searches.
func BenchmarkTryVictimSearch(b *testing.B) {
	w := newBenchWorld(b, 10, 100, 2, []benchClass{{20, 200}})
	name := schedtypes.QuotaName(benchChild(3, 7))
	key := schedtypes.UnitKey("ns/bench-try")
	u := utiltesting.MakeQueueUnit("bench-try", "ns").Quota(string(name)).Request(corev1.ResourceCPU, "20").Priority(200).Created(testStart).Obj()
	if err := w.c.Create(w.ctx, u); err != nil {
		b.Fatal(err)
	}
	w.s.intake.onUnit(u)
	pending, ok := w.s.env.queues.Get(key)
	if !ok {
		b.Fatal("the unit is not pending")
	}
	settings, _ := w.s.env.queues.QueueSettings(schedtypes.QueueName(name))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		w.clk.Step(2 * time.Second)
		b.StartTimer()
		if f := w.s.pass.try(w.ctx, pending, settings, shortfalls{}); f == nil || f.Preempting {
			b.Fatalf("try = %+v, want a refusal with nobody to evict", f)
		}
	}
}
