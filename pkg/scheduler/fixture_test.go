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
	"sync/atomic"
	"testing"
	"time"

	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// testStart is when every fixture's clock starts.
var testStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fixture is a scheduler built on a fake API, a fake clock and the test
// plugin, watching nothing: tests call its handlers and passes themselves,
// and make the status writes with the writer fixture's drain.
type fixture struct {
	*writerFixture
	s      *Scheduler
	clk    *clocktesting.FakeClock
	plugin *testPlugin
	events *record.FakeRecorder
	ctx    context.Context

	failMu sync.Mutex
	// fail, when set, answers a status patch instead of the API.
	fail         func(obj client.Object) error
	queuePatches atomic.Int32
}

// newFixture builds a leading scheduler with opts changed by mod (may be nil).
func newFixture(t *testing.T, mod func(*Options)) *fixture {
	t.Helper()
	f := &fixture{writerFixture: &writerFixture{}, clk: clocktesting.NewFakeClock(testStart), plugin: newTestPlugin(),
		events: record.NewFakeRecorder(1000), ctx: context.Background()}
	wf := f.writerFixture
	scheme := testScheme(t)
	if err := schedulingv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	wf.c = fake.NewClientBuilder().WithScheme(scheme).
		WithStatusSubresource(&schedv1alpha1.QueueUnit{}, &schedv1alpha1.Queue{}).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				f.failMu.Lock()
				fail := f.fail
				f.failMu.Unlock()
				if fail != nil {
					if err := fail(sentUnit(obj, patch)); err != nil {
						return err
					}
				}
				if _, ok := obj.(*schedv1alpha1.Queue); ok {
					f.queuePatches.Add(1)
				} else {
					wf.mu.Lock()
					wf.patches++
					wf.mu.Unlock()
				}
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
		}).Build()
	cfg := &configv1.KoordQueueConfiguration{Plugins: []configv1.Plugin{{Name: "Test"}}}
	cfg.SetDefaults()
	opts := Options{Config: cfg, Clock: f.clk}
	if mod != nil {
		mod(&opts)
	}
	s, err := build(deps{client: wf.c, reader: wf.c, recorder: f.events}, f.plugin.registry(), opts)
	if err != nil {
		t.Fatal(err)
	}
	// The writer's delays run on the real clock (see
	// TestWriterDelaysFollowTheSchedulersClock): its queues are replaced by
	// ones on the fake clock, before anything is written.
	s.writer.decide.ShutDown()
	s.writer.inform.ShutDown()
	s.writer.decide, s.writer.inform = newClockQueue(f.clk), newClockQueue(f.clk)
	wf.w = s.writer
	s.env.leading.Store(true)
	f.s = s
	t.Cleanup(func() {
		s.writer.decide.ShutDown()
		s.writer.inform.ShutDown()
		s.lifecycle.queue.ShutDown()
	})
	return f
}

// failPatches makes status patches fail with what fn answers (nil: pass).
func (f *fixture) failPatches(fn func(obj client.Object) error) {
	f.failMu.Lock()
	defer f.failMu.Unlock()
	f.fail = fn
}

// makeUnit starts a unit of namespace ns in quota q asking cpu.
func makeUnit(name, q string, cpu string) *utiltesting.QueueUnitWrapper {
	return utiltesting.MakeQueueUnit(name, "ns").Quota(q).Request("cpu", cpu).Created(testStart.Add(-time.Hour))
}

// addQueue creates a served Queue and gives it to the scheduler.
func (f *fixture) addQueue(t *testing.T, q *schedv1alpha1.Queue) *schedv1alpha1.Queue {
	t.Helper()
	if err := f.c.Create(f.ctx, q); err != nil {
		t.Fatal(err)
	}
	got := &schedv1alpha1.Queue{}
	if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(q), got); err != nil {
		t.Fatal(err)
	}
	f.s.queueSync.onQueue(got)
	return got
}

// addUnit creates u (with its status) and hands the stored object to the
// scheduler, as the informer would.
func (f *fixture) addUnit(t *testing.T, u *schedv1alpha1.QueueUnit) *schedv1alpha1.QueueUnit {
	t.Helper()
	status := u.Status
	if err := f.c.Create(f.ctx, u); err != nil {
		t.Fatal(err)
	}
	stored := &schedv1alpha1.QueueUnit{}
	if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(u), stored); err != nil {
		t.Fatal(err)
	}
	if status.Phase != "" {
		stored.Status = status
		if err := f.c.Status().Update(f.ctx, stored); err != nil {
			t.Fatal(err)
		}
	}
	f.s.intake.onUnit(stored)
	return stored
}

// feed hands the stored unit to the scheduler, as the informer would.
func (f *fixture) feed(t *testing.T, name string) *schedv1alpha1.QueueUnit {
	t.Helper()
	u := f.get(t, name)
	f.s.intake.onUnit(u)
	return u
}

// extension changes a unit's status as the job extension would, and feeds it.
func (f *fixture) extension(t *testing.T, name string, mutate func(u *schedv1alpha1.QueueUnit)) *schedv1alpha1.QueueUnit {
	t.Helper()
	u := f.get(t, name)
	mutate(u)
	if err := f.c.Status().Update(f.ctx, u); err != nil {
		t.Fatal(err)
	}
	return f.feed(t, name)
}

// pass runs one pass, makes the writes it caused that are due now, and
// brings what was written back, as the informer would.
func (f *fixture) pass(t *testing.T) {
	t.Helper()
	f.s.pass.schedule(f.ctx)
	f.drain(t)
	f.sync(t)
}

// sync hands the scheduler every unit whose stored version it has not seen,
// as the informer would.
func (f *fixture) sync(t *testing.T) {
	t.Helper()
	list := &schedv1alpha1.QueueUnitList{}
	if err := f.c.List(f.ctx, list); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		u := &list.Items[i]
		if seen, _ := f.s.cache.object(keyOf(u)); seen == nil || seen.ResourceVersion != u.ResourceVersion {
			f.s.intake.onUnit(u)
		}
	}
}

// step moves the clock by d, waits for what became due to be queued, makes
// the writes and brings them back as the informer would. ready says what to
// wait for (nil: nothing).
func (f *fixture) step(t *testing.T, d time.Duration, ready func() bool) {
	t.Helper()
	f.clk.Step(d)
	if ready != nil {
		eventually(t, ready, "work due after %s", d)
	}
	f.drain(t)
	f.sync(t)
}

// informDue reports whether an informational write waits to be made.
func (f *fixture) informDue() bool { return f.w.inform.Len() > 0 }

// timerSet runs action and waits until it set a timer on the clock: a
// delayed lifecycle key or a wakeup, so a step after it fires it. (The
// writer's delays need none: see clockQueue.)
func (f *fixture) timerSet(t *testing.T, action func()) {
	t.Helper()
	before := f.clk.Waiters()
	action()
	eventually(t, func() bool { return f.clk.Waiters() > before }, "a timer on the clock")
}

// lifecycleRun works the lifecycle queue dry, as its workers would, and
// makes the writes.
func (f *fixture) lifecycleRun(t *testing.T) {
	t.Helper()
	for range 100 {
		if f.s.lifecycle.queue.Len() == 0 {
			f.drain(t)
			return
		}
		f.s.lifecycle.processNext(f.ctx)
	}
	t.Fatal("the lifecycle queue did not run dry")
}

// takeEvents returns the events recorded since the last call.
func (f *fixture) takeEvents() []string {
	var out []string
	for {
		select {
		case e := <-f.events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// eventsWith returns the events whose text contains every part.
func eventsWith(events []string, parts ...string) []string {
	var out []string
next:
	for _, e := range events {
		for _, p := range parts {
			if !strings.Contains(e, p) {
				continue next
			}
		}
		out = append(out, e)
	}
	return out
}

// eventually polls cond until it holds, or fails the test after a deadline.
func eventually(t *testing.T, cond func() bool, what string, args ...any) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out waiting for "+what, args...)
	}
}

// condition returns u's condition of type ct, or nil.
func condition(u *schedv1alpha1.QueueUnit, ct string) *metav1.Condition {
	return meta.FindStatusCondition(u.Status.Conditions, ct)
}

// wantWaiting fails unless u says it waits with condition reason reason and a
// message starting with prefix.
func wantWaiting(t *testing.T, u *schedv1alpha1.QueueUnit, reason, prefix string) {
	t.Helper()
	c := condition(u, schedv1alpha1.ConditionQuotaReserved)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != reason {
		t.Fatalf("%s: QuotaReserved = %+v, want False with reason %s", u.Name, c, reason)
	}
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued {
		t.Errorf("%s: phase = %s, want Enqueued", u.Name, u.Status.Phase)
	}
	if !strings.HasPrefix(u.Status.Message, prefix) || c.Message != u.Status.Message {
		t.Errorf("%s: message = %q (condition %q), want it to start with %q in both", u.Name, u.Status.Message, c.Message, prefix)
	}
}

// pendingIn reports whether unit key waits in queue name.
func (f *fixture) pendingIn(name schedtypes.QueueName, key schedtypes.UnitKey) bool {
	units, _ := f.s.env.queues.Pending(name)
	for _, p := range units {
		if p.Key == key {
			return true
		}
	}
	return false
}
