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
	"errors"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/util/fence"
)

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := schedv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func unitObj(name string, phase schedv1alpha1.QueueUnitPhase) *schedv1alpha1.QueueUnit {
	return &schedv1alpha1.QueueUnit{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))},
		Status:     schedv1alpha1.QueueUnitStatus{Phase: phase},
	}
}

// writerFixture is a status writer on a fake API with its unit, and what
// reached the API.
type writerFixture struct {
	w       *statusWriter
	c       client.Client
	mu      sync.Mutex
	patches int
}

func newWriterFixture(t *testing.T, objs ...client.Object) *writerFixture {
	t.Helper()
	return faultyFixture(t, func(int, client.Object) error { return nil }, objs...)
}

// has reports whether a write for key is waiting. The scheduler itself
// never asks apart from queueing (enqueueUnlessPending): a test and a queueing
// in two steps let another write slip in between.
func (w *statusWriter) has(key schedtypes.UnitKey) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.pending[key]
	return ok
}

// drain makes every waiting write, decisions first, as the workers would.
func (f *writerFixture) drain(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for range 100 {
		switch {
		case f.w.decide.Len() > 0:
			f.w.processNext(ctx, f.w.decide, false)
		case f.w.inform.Len() > 0:
			f.w.processNext(ctx, f.w.inform, true)
		default:
			return
		}
	}
	t.Fatal("the writer did not run dry")
}

func (f *writerFixture) get(t *testing.T, name string) *schedv1alpha1.QueueUnit {
	t.Helper()
	u := &schedv1alpha1.QueueUnit{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, u); err != nil {
		t.Fatal(err)
	}
	return u
}

func setMessage(msg string) func(*schedv1alpha1.QueueUnit) bool {
	return func(x *schedv1alpha1.QueueUnit) bool {
		if x.Status.Message == msg {
			return false
		}
		x.Status.Message = msg
		return true
	}
}

func setEvicted(x *schedv1alpha1.QueueUnit) bool {
	if meta.IsStatusConditionTrue(x.Status.Conditions, schedv1alpha1.ConditionEvicted) {
		return false
	}
	queueunit.SetCondition(x, schedv1alpha1.ConditionEvicted, metav1.ConditionTrue, schedv1alpha1.ReasonPreempted, "to admit ns/p", metav1.Now())
	return true
}

func TestWriterDecisionIsNotReplacedByInformation(t *testing.T) {
	base := unitObj("a", schedv1alpha1.QueueUnitPhaseRunning)
	f := newWriterFixture(t, base)
	f.w.enqueue("ns/a", &write{base: base, retryOnConflict: true, mutate: setEvicted}, 0)
	f.w.enqueue("ns/a", &write{base: base, retryOnConflict: true, info: true, mutate: setMessage("why")}, 0)
	f.drain(t)
	got := f.get(t, "a")
	if !meta.IsStatusConditionTrue(got.Status.Conditions, schedv1alpha1.ConditionEvicted) {
		t.Fatalf("the eviction was lost to an informational write: %+v", got.Status)
	}
	if got.Status.Message == "why" {
		t.Fatalf("the informational write replaced a decision and was made")
	}
}

func TestWriterInformationIsReplacedByTheNewest(t *testing.T) {
	base := unitObj("a", schedv1alpha1.QueueUnitPhaseEnqueued)
	f := newWriterFixture(t, base)
	f.w.enqueue("ns/a", &write{base: base, retryOnConflict: true, info: true, mutate: setMessage("first")}, 0)
	f.w.enqueue("ns/a", &write{base: base, retryOnConflict: true, info: true, mutate: setMessage("second")}, 0)
	f.drain(t)
	if got := f.get(t, "a").Status.Message; got != "second" {
		t.Fatalf("message = %q, want the newest report", got)
	}
	if f.patches != 1 {
		t.Fatalf("%d patches, want 1: the older report is replaced, not written", f.patches)
	}
}

func TestWriterAdmissionIsNeverReplaced(t *testing.T) {
	base := unitObj("a", schedv1alpha1.QueueUnitPhaseEnqueued)
	f := newWriterFixture(t, base)
	var outcome error
	done := false
	f.w.enqueue("ns/a", &write{base: base, mutate: func(x *schedv1alpha1.QueueUnit) bool {
		x.Status.Phase = schedv1alpha1.QueueUnitPhaseDequeued
		return true
	}, done: func(_ *schedv1alpha1.QueueUnit, err error) { done, outcome = true, err }}, 0)
	f.w.enqueue("ns/a", &write{base: base, retryOnConflict: true, mutate: setMessage("a decision")}, 0)
	f.w.enqueue("ns/a", &write{base: base, retryOnConflict: true, info: true, mutate: setMessage("information")}, 0)
	f.drain(t)
	if !done || outcome != nil {
		t.Fatalf("admission done=%v err=%v, want it made", done, outcome)
	}
	got := f.get(t, "a")
	if got.Status.Phase != schedv1alpha1.QueueUnitPhaseDequeued || got.Status.Message != "" {
		t.Fatalf("status = %+v, want the admission alone", got.Status)
	}
}

// An eviction waiting to be written meets a lifecycle move of the same unit:
// both land, in one write, and each records its event only because it
// changed the object.
func TestWriterTwoDecisionsAreBothMade(t *testing.T) {
	base := unitObj("a", schedv1alpha1.QueueUnitPhaseRunning)
	base.Status.RequeueState = &schedv1alpha1.RequeueState{}
	f := newWriterFixture(t, base)
	var events []string
	f.w.enqueue("ns/a", &write{base: base, retryOnConflict: true, mutate: setEvicted,
		written: func(*schedv1alpha1.QueueUnit) { events = append(events, "Preempted") }}, time.Hour)
	f.w.enqueue("ns/a", &write{base: base, retryOnConflict: true, mutate: func(x *schedv1alpha1.QueueUnit) bool {
		if x.Status.RequeueState == nil {
			return false
		}
		x.Status.RequeueState = nil
		return true
	}, written: func(*schedv1alpha1.QueueUnit) { events = append(events, "RequeueStateCleared") }}, 0)
	f.drain(t)
	got := f.get(t, "a")
	if !meta.IsStatusConditionTrue(got.Status.Conditions, schedv1alpha1.ConditionEvicted) {
		t.Fatalf("the pending eviction was replaced by the lifecycle write: %+v", got.Status)
	}
	if got.Status.RequeueState != nil {
		t.Fatalf("the lifecycle write was lost: %+v", got.Status.RequeueState)
	}
	if f.patches != 1 {
		t.Fatalf("%d patches, want the two decisions in 1", f.patches)
	}
	if len(events) != 2 || events[0] != "Preempted" || events[1] != "RequeueStateCleared" {
		t.Fatalf("events = %v, want both, in order", events)
	}

	// A decision no longer wanted records nothing, the other still lands.
	f.w.enqueue("ns/a", &write{base: got, retryOnConflict: true, mutate: setEvicted,
		written: func(*schedv1alpha1.QueueUnit) { events = append(events, "Preempted again") }}, 0)
	f.w.enqueue("ns/a", &write{base: got, retryOnConflict: true, mutate: setMessage("moved"),
		written: func(*schedv1alpha1.QueueUnit) { events = append(events, "Moved") }}, 0)
	f.drain(t)
	if got := f.get(t, "a"); got.Status.Message != "moved" {
		t.Fatalf("message = %q, want the second decision made", got.Status.Message)
	}
	if len(events) != 3 || events[2] != "Moved" {
		t.Fatalf("events = %v, want only the decision that changed something recorded", events)
	}
}

func TestWriterRetriesAConflictOnFreshData(t *testing.T) {
	stored := unitObj("a", schedv1alpha1.QueueUnitPhaseEnqueued)
	f := newWriterFixture(t, stored)
	stale := f.get(t, "a")
	// Someone else writes first: the writer's base is now stale.
	other := stale.DeepCopy()
	other.Status.Attempts = 7
	if err := f.c.Status().Update(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	f.w.enqueue("ns/a", &write{base: stale, retryOnConflict: true, info: true, mutate: setMessage("why")}, 0)
	f.drain(t)
	got := f.get(t, "a")
	if got.Status.Message != "why" || got.Status.Attempts != 7 {
		t.Fatalf("status = %+v, want the report on top of the other write", got.Status)
	}

	// An admission is not retried on a conflict: its owner hears of it.
	var outcome error
	f.w.enqueue("ns/a", &write{base: stale, mutate: func(x *schedv1alpha1.QueueUnit) bool {
		x.Status.Phase = schedv1alpha1.QueueUnitPhaseDequeued
		return true
	}, done: func(_ *schedv1alpha1.QueueUnit, err error) { outcome = err }}, 0)
	f.drain(t)
	if outcome == nil {
		t.Fatal("an admission on a stale object was written; want a conflict for its owner")
	}
	if got := f.get(t, "a"); got.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued {
		t.Fatalf("phase = %s, want the admission not made", got.Status.Phase)
	}
}

func TestWriterDropInfoAndHas(t *testing.T) {
	base := unitObj("a", schedv1alpha1.QueueUnitPhaseEnqueued)
	f := newWriterFixture(t, base)
	if f.w.has("ns/a") {
		t.Fatal("has before any write")
	}
	f.w.enqueue("ns/a", &write{base: base, retryOnConflict: true, info: true, mutate: setMessage("why")}, 0)
	if !f.w.has("ns/a") {
		t.Fatal("has = false with a write waiting")
	}
	f.w.dropInfo("ns/a")
	if f.w.has("ns/a") {
		t.Fatal("the information was not dropped")
	}
	f.w.enqueue("ns/a", &write{base: base, retryOnConflict: true, mutate: setMessage("decided")}, 0)
	f.w.dropInfo("ns/a")
	f.drain(t)
	if got := f.get(t, "a").Status.Message; got != "decided" {
		t.Fatalf("message = %q: dropInfo must not drop a decision", got)
	}
}

// Information steps aside while decisions wait, so the write budget goes to
// admissions under load.
func TestWriterInformationWaitsForDecisions(t *testing.T) {
	a, b := unitObj("a", schedv1alpha1.QueueUnitPhaseEnqueued), unitObj("b", schedv1alpha1.QueueUnitPhaseEnqueued)
	f := newWriterFixture(t, a, b)
	f.w.enqueue("ns/a", &write{base: a, retryOnConflict: true, info: true, mutate: setMessage("why")}, 0)
	f.w.enqueue("ns/b", &write{base: b, retryOnConflict: true, mutate: setMessage("decided")}, 0)
	f.w.processNext(context.Background(), f.w.inform, true)
	if f.patches != 0 {
		t.Fatalf("information was written while a decision waited")
	}
	if !f.w.has("ns/a") {
		t.Fatal("the information was lost instead of put back")
	}
	f.w.processNext(context.Background(), f.w.decide, false)
	if f.patches != 1 || f.get(t, "b").Status.Message != "decided" {
		t.Fatalf("the decision was not made first")
	}
}

func TestWriterNotFoundEndsTheWrite(t *testing.T) {
	f := newWriterFixture(t)
	var outcome error
	f.w.enqueue("ns/gone", &write{base: unitObj("gone", schedv1alpha1.QueueUnitPhaseEnqueued), mutate: setMessage("x"),
		done: func(_ *schedv1alpha1.QueueUnit, err error) { outcome = err }}, 0)
	f.drain(t)
	if outcome == nil {
		t.Fatal("a write to a deleted unit reported success")
	}
	if f.w.has("ns/gone") {
		t.Fatal("the write to a deleted unit is still waiting")
	}
}

// faultyFixture is a writer whose patches fail as told: fail returns the
// error for the n-th patch (0-based), or nil to let it through.
func faultyFixture(t *testing.T, fail func(n int, obj client.Object) error, objs ...client.Object) *writerFixture {
	t.Helper()
	f := &writerFixture{}
	f.c = fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(objs...).
		WithStatusSubresource(&schedv1alpha1.QueueUnit{}).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				f.mu.Lock()
				n := f.patches
				f.patches++
				f.mu.Unlock()
				if err := fail(n, sentUnit(obj, patch)); err != nil {
					return err
				}
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
		}).Build()
	f.w = newStatusWriter(f.c, f.c, nil, nil)
	return f
}

// drainRetries runs the writer until nothing waits, taking rate-limited
// retries as they come due (5 ms, 10 ms, ...: real time, bounded).
func (f *writerFixture) drainRetries(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for f.w.has("ns/a") || f.w.decide.Len() > 0 || f.w.inform.Len() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("writes still waiting after 10 s")
		}
		if f.w.decide.Len() > 0 {
			f.w.processNext(context.Background(), f.w.decide, false)
		} else if f.w.inform.Len() > 0 {
			f.w.processNext(context.Background(), f.w.inform, true)
		} else {
			// A retry is due in a few milliseconds; Get blocks until it is.
			key, _ := f.w.decide.Get()
			f.w.decide.Done(key)
			f.w.decide.Add(key)
		}
	}
}

var errServer = apierrors.NewInternalError(errors.New("etcd leader changed"))

// An eviction that fails is made again until it lands: left unwritten, the
// victim stays marked evicting and its preemptor waits forever.
func TestWriterRetriesAFailedEviction(t *testing.T) {
	base := unitObj("a", schedv1alpha1.QueueUnitPhaseRunning)
	f := faultyFixture(t, func(n int, _ client.Object) error {
		if n < 2 {
			return errServer
		}
		return nil
	}, base)
	var events int
	f.w.enqueue("ns/a", &write{base: base, retryOnConflict: true, mutate: setEvicted, written: func(*schedv1alpha1.QueueUnit) { events++ }}, 0)
	f.drainRetries(t)
	if !meta.IsStatusConditionTrue(f.get(t, "a").Status.Conditions, schedv1alpha1.ConditionEvicted) {
		t.Fatal("the eviction was dropped after a server error")
	}
	if f.patches != 3 || events != 1 {
		t.Fatalf("patches=%d events=%d, want 3 attempts and one event", f.patches, events)
	}
}

// An admission whose answer was lost (the patch landed, the connection
// broke) is not given away: made again on its old base it conflicts, and a
// fresh read shows it landed.
func TestWriterLearnsTheOutcomeOfAnUncertainAdmission(t *testing.T) {
	base := unitObj("a", schedv1alpha1.QueueUnitPhaseEnqueued)
	var f *writerFixture
	f = faultyFixture(t, func(n int, obj client.Object) error {
		if n == 0 {
			// Land it, then lose the answer.
			if err := f.c.SubResource("status").Patch(context.Background(), obj.DeepCopyObject().(client.Object),
				client.MergeFrom(base)); err != nil {
				t.Errorf("landing the first attempt: %v", err)
			}
			return errors.New("connection reset by peer")
		}
		return nil
	}, base)
	at := metav1.NewTime(time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC))
	var outcome error
	var got *schedv1alpha1.QueueUnit
	calls := 0
	f.w.enqueue("ns/a", &write{base: base,
		landed: func(fresh *schedv1alpha1.QueueUnit) bool { return admissionLanded(fresh, "team-a", at) },
		mutate: func(x *schedv1alpha1.QueueUnit) bool {
			x.Status.Phase, x.Status.Quota, x.Status.LastAllocateTime = schedv1alpha1.QueueUnitPhaseDequeued, "team-a", &at
			return true
		},
		done: func(w *schedv1alpha1.QueueUnit, err error) { calls++; got, outcome = w, err }}, 0)
	f.drainRetries(t)
	if calls != 1 || outcome != nil || got == nil || got.Status.Phase != schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatalf("done called %d times, err=%v, written=%v: want the landed admission reported once", calls, outcome, got)
	}
}

// A permanent refusal is told once and backed off; other units keep moving.
func TestWriterBacksOffAPermanentRefusal(t *testing.T) {
	a, b := unitObj("a", schedv1alpha1.QueueUnitPhaseEnqueued), unitObj("b", schedv1alpha1.QueueUnitPhaseEnqueued)
	f := faultyFixture(t, func(_ int, obj client.Object) error {
		if obj.GetName() == "a" {
			return apierrors.NewRequestEntityTooLargeError("limit is 3145728")
		}
		return nil
	}, a, b)
	var told []string
	f.w.refused = func(u *schedv1alpha1.QueueUnit, err error) { told = append(told, u.Name+": "+err.Error()) }
	f.w.enqueue("ns/a", &write{base: a, retryOnConflict: true, mutate: setMessage("x")}, 0)
	for range 3 {
		// Each failed attempt waits its unit's backoff, doubling.
		key, _ := f.w.decide.Get()
		f.w.decide.Done(key)
		f.w.decide.Add(key)
		f.w.processNext(context.Background(), f.w.decide, false)
	}
	if got := f.w.decide.NumRequeues("ns/a"); got != 3 {
		t.Fatalf("requeues of the refused unit = %d, want 3 with backoff (not a hot loop, not dropped)", got)
	}
	if len(told) != 1 {
		t.Fatalf("refusal told %d times (%v), want once", len(told), told)
	}
	f.w.enqueue("ns/b", &write{base: b, retryOnConflict: true, mutate: setMessage("moving")}, 0)
	for f.w.decide.Len() > 0 {
		f.w.processNext(context.Background(), f.w.decide, false)
	}
	if got := f.get(t, "b").Status.Message; got != "moving" {
		t.Fatalf("another unit's write waited behind the refused one (message %q)", got)
	}
}

// A replica that may have lost its lease writes nothing, and keeps what it
// wanted to write for when it renews.
func TestWriterWritesNothingOutsideTheFence(t *testing.T) {
	base := unitObj("a", schedv1alpha1.QueueUnitPhaseRunning)
	f := newWriterFixture(t, base)
	allowed := false
	f.w.fence = func() bool { return allowed }
	f.w.enqueue("ns/a", &write{base: base, retryOnConflict: true, mutate: setEvicted}, 0)
	f.w.processNext(context.Background(), f.w.decide, false)
	if f.patches != 0 {
		t.Fatal("a fenced replica wrote")
	}
	if !f.w.has("ns/a") {
		t.Fatal("the fenced write was dropped")
	}
	allowed = true
	key, _ := f.w.decide.Get() // due after fenceRetry
	f.w.decide.Done(key)
	f.w.decide.Add(key)
	f.w.processNext(context.Background(), f.w.decide, false)
	if !meta.IsStatusConditionTrue(f.get(t, "a").Status.Conditions, schedv1alpha1.ConditionEvicted) {
		t.Fatal("the write was not made once the lease was renewed")
	}
}

// A unit's first phase is queued only when nothing waits for the unit: a
// report of why it waits, queued by a pass at the same moment, is never
// replaced by it (the report would be lost for good: the reason counts as
// reported). Both orders are raced many times.
func TestWriterFirstPhaseNeverReplacesAReport(t *testing.T) {
	base := unitObj("a", schedv1alpha1.QueueUnitPhaseNone)
	f := newWriterFixture(t, base)
	var reportFirst, phaseFirst int
	for range 2000 {
		report := &write{base: base, retryOnConflict: true, info: true, mutate: setMessage("why")}
		phase := &write{base: base, retryOnConflict: true, info: true, mutate: setMessage("")}
		start := make(chan struct{})
		var wg sync.WaitGroup
		var queued bool
		wg.Go(func() { <-start; f.w.enqueue("ns/a", report, 0) })
		wg.Go(func() { <-start; queued = f.w.enqueueUnlessPending("ns/a", phase, 0) })
		close(start)
		wg.Wait()
		if queued {
			phaseFirst++
		} else {
			reportFirst++
		}
		f.w.mu.Lock()
		got := f.w.pending["ns/a"]
		delete(f.w.pending, "ns/a")
		f.w.mu.Unlock()
		if got != report {
			t.Fatalf("the first phase replaced the report (phase queued: %v)", queued)
		}
		for f.w.inform.Len() > 0 {
			k, _ := f.w.inform.Get()
			f.w.inform.Done(k)
		}
	}
	t.Logf("report first %d times, first phase first %d times", reportFirst, phaseFirst)
}

// While decisions wait, the informational workers wait before they take a
// report, instead of taking every waiting report and putting it back after
// infoRetry (which, with thousands of reports, kept the scheduler busy
// re-queueing them). Once the decisions are made, every report is written.
func TestWriterInformationWaitsWithoutChurning(t *testing.T) {
	const reports = 200
	objs := []client.Object{unitObj("d0", schedv1alpha1.QueueUnitPhaseRunning), unitObj("d1", schedv1alpha1.QueueUnitPhaseRunning)}
	for i := range reports {
		objs = append(objs, unitObj(fmt.Sprintf("r%d", i), schedv1alpha1.QueueUnitPhaseEnqueued))
	}
	gate := make(chan struct{})
	f := faultyFixture(t, func(_ int, obj client.Object) error {
		if obj.GetName() == "d0" {
			<-gate
		}
		return nil
	}, objs...)
	for i := range reports {
		u := objs[2+i].(*schedv1alpha1.QueueUnit)
		f.w.enqueue(keyOf(u), &write{base: u, retryOnConflict: true, info: true, mutate: setMessage("why")}, 0)
	}
	// d0's write blocks the only decision worker; d1 waits behind it.
	for _, o := range objs[:2] {
		u := o.(*schedv1alpha1.QueueUnit)
		f.w.enqueue(keyOf(u), &write{base: u, retryOnConflict: true, mutate: setEvicted}, 0)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.w.run(ctx, 1); close(done) }()
	var open sync.Once
	release := func() { open.Do(func() { close(gate) }) }
	t.Cleanup(func() {
		release() // a failed test leaves d0's write blocked otherwise
		cancel()
		<-done
	})
	if err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return f.w.decide.Len() == 1, nil // d0 taken, d1 waiting
	}); err != nil {
		t.Fatal("the decision worker did not take d0")
	}
	// Watched over three retry periods (a window for something that must
	// not happen): a worker that takes reports and puts them back empties
	// the ready queue within microseconds.
	if err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 3*infoRetry, true, func(context.Context) (bool, error) {
		return f.w.inform.Len() < reports, nil
	}); err == nil {
		t.Fatalf("%d of %d reports ready while a decision waits: a worker took reports and put them back", f.w.inform.Len(), reports)
	}
	f.mu.Lock()
	patches := f.patches
	f.mu.Unlock()
	if patches != 1 {
		t.Fatalf("%d patches while the decision worker was blocked, want only d0's", patches)
	}
	release()
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.patches == reports+2, nil
	}); err != nil {
		f.mu.Lock()
		t.Fatalf("%d patches once the decisions were made, want %d", f.patches, reports+2)
	}
	for _, name := range []string{"r0", fmt.Sprintf("r%d", reports-1)} {
		if got := f.get(t, name).Status.Message; got != "why" {
			t.Errorf("%s says %q, want its report", name, got)
		}
	}
}

// A write the client's transport kept back past the fence was not sent: it
// waits for a renewal like a write the writer fenced itself, is not told as
// a refusal, and an admission is not given up.
func TestWriterKeepsAWriteTheTransportFenced(t *testing.T) {
	base := unitObj("a", schedv1alpha1.QueueUnitPhaseEnqueued)
	f := faultyFixture(t, func(int, client.Object) error {
		return &url.Error{Op: "Patch", URL: "https://api/x", Err: fmt.Errorf("%w (PATCH /x)", fence.ErrFenced)}
	}, base)
	var told int
	f.w.refused = func(*schedv1alpha1.QueueUnit, error) { told++ }
	done := 0
	f.w.enqueue("ns/a", &write{base: base, mutate: setMessage("admitted"), done: func(*schedv1alpha1.QueueUnit, error) { done++ }}, 0)
	f.w.processNext(context.Background(), f.w.decide, false)
	if !f.w.has("ns/a") || done != 0 || told != 0 {
		t.Fatalf("pending=%v done=%d told=%d: want the admission kept for a renewal, untold", f.w.has("ns/a"), done, told)
	}
	if n := f.w.decide.NumRequeues("ns/a"); n != 0 {
		t.Fatalf("the fenced write was backed off as a failure (%d requeues), want it to wait fenceRetry", n)
	}
}

// When the scheduler stops, the write in flight finishes before run
// returns (and so before the lease is released); writes not yet taken are
// not made.
func TestWriterDrainsTheWriteInFlight(t *testing.T) {
	a, b := unitObj("a", schedv1alpha1.QueueUnitPhaseRunning), unitObj("b", schedv1alpha1.QueueUnitPhaseRunning)
	started, release := make(chan struct{}), make(chan struct{})
	f := newWriterFixture(t, a, b)
	// The first patch takes until released; a patch whose context ended
	// meanwhile fails unmade, as a real request would.
	var once sync.Once
	inner := f.w.c
	f.w.c = interceptor.NewClient(inner.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			once.Do(func() {
				close(started)
				<-release
			})
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		f.w.run(ctx, 1)
		close(stopped)
	}()
	f.w.enqueue("ns/a", &write{base: a, retryOnConflict: true, mutate: setEvicted}, 0)
	<-started
	f.w.enqueue("ns/b", &write{base: b, retryOnConflict: true, mutate: setEvicted}, 0)
	cancel()
	select {
	case <-stopped:
		t.Fatal("the writer returned with a write in flight")
	default:
	}
	close(release)
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the writer did not return once its write finished")
	}
	if !meta.IsStatusConditionTrue(f.get(t, "a").Status.Conditions, schedv1alpha1.ConditionEvicted) {
		t.Fatal("the write in flight was cut short by the stop")
	}
	if f.patches != 1 {
		t.Fatalf("%d patches, want only the one in flight", f.patches)
	}
}

// askedQueue counts what the writer asks of a queue.
type askedQueue struct {
	*clockQueue
	asked int
}

func (q *askedQueue) Add(key schedtypes.UnitKey) { q.asked++; q.clockQueue.Add(key) }
func (q *askedQueue) AddAfter(key schedtypes.UnitKey, d time.Duration) {
	q.asked++
	q.clockQueue.AddAfter(key, d)
}

// A report that replaces one whose turn comes no later does not ask the
// queue again, and goes out at that turn; one due sooner, or one after a
// write put back, does ask. The last report is what is written.
func TestWriterReportReplacingAnEarlierOneAsksTheQueueOnce(t *testing.T) {
	base := unitObj("a", schedv1alpha1.QueueUnitPhaseEnqueued)
	f := newWriterFixture(t, base)
	clk := clocktesting.NewFakeClock(testStart)
	f.w.inform.ShutDown()
	q := &askedQueue{clockQueue: newClockQueue(clk)}
	f.w.inform = q
	report := func(msg string, delay time.Duration) {
		f.w.enqueue("ns/a", &write{base: base, retryOnConflict: true, info: true, mutate: setMessage(msg)}, delay)
	}
	asked := func(step string, want int) {
		t.Helper()
		if q.asked != want {
			t.Fatalf("after %s the queue was asked %d times, want %d", step, q.asked, want)
		}
	}
	report("one", 5*time.Second)
	report("two", 5*time.Second)
	asked("two reports due alike", 1)
	report("three", time.Second)
	asked("a report due sooner", 2)
	report("four", 3*time.Second)
	asked("a report due later than the last turn asked", 2)
	clk.Step(time.Second)
	f.drain(t)
	if got := f.get(t, "a").Status.Message; got != "four" {
		t.Fatalf("written %q, want the last report, four", got)
	}
	f.w.again("ns/a", &write{base: f.get(t, "a"), retryOnConflict: true, info: true, mutate: setMessage("five")}, time.Minute)
	asked("a write put back", 3)
	report("six", 5*time.Second)
	asked("a report after a write put back", 4)
	clk.Step(5 * time.Second)
	f.drain(t)
	if got := f.get(t, "a").Status.Message; got != "six" {
		t.Fatalf("written %q, want six", got)
	}
}
