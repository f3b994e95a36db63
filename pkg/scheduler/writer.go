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
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/util/fence"
	"github.com/koordinator-sh/koord-queue/pkg/util/mutation"
)

// write is one status change to make on a unit.
type write struct {
	// base is the object the decision was made on; the patch is computed
	// against it and carries its resourceVersion, so a unit that changed
	// since is not overwritten.
	base *schedv1alpha1.QueueUnit
	// mutate applies the change to a copy of base; false means the change is
	// no longer wanted on this object (nothing is written).
	mutate func(u *schedv1alpha1.QueueUnit) bool
	// retryOnConflict re-reads and re-applies mutate on a conflict; a write
	// that carries a decision (an admission) must not, and is reported instead.
	retryOnConflict bool
	// info marks a write that only informs (a first phase, why a unit waits):
	// it waits while decisions (admissions, evictions, lifecycle moves) are
	// being written, and a later write to the same unit replaces it.
	info bool
	// done learns the outcome: the written object, or the error. A write
	// with done is an admission: its owner keeps the room charged until done
	// runs, so done runs only once the outcome is known (see processNext).
	done func(written *schedv1alpha1.QueueUnit, err error)
	// landed tells, from a fresh read after a conflict, whether this write
	// was made after all (an earlier attempt whose answer was lost landed).
	landed func(fresh *schedv1alpha1.QueueUnit) bool
	// written runs once the change is in the API (events go here, so a write
	// that never happens records nothing).
	written func(u *schedv1alpha1.QueueUnit)
	// after is the delay an informational write was queued with by
	// enqueue; -1 when it was queued again by again (its turn unknown).
	after time.Duration
}

// then is a made first and b after it, as one write on b's newer base. Each
// keeps its own test of whether it is still wanted, and its own callbacks,
// which run only when it changed the object.
func (a *write) then(b *write) *write {
	var aChanged, bChanged bool
	both := &write{
		base:            b.base,
		retryOnConflict: a.retryOnConflict && b.retryOnConflict,
		done:            b.done,
		landed:          b.landed,
		mutate: func(u *schedv1alpha1.QueueUnit) bool {
			aChanged = a.mutate(u)
			bChanged = b.mutate(u)
			return aChanged || bChanged
		},
	}
	if a.written != nil || b.written != nil {
		both.written = func(u *schedv1alpha1.QueueUnit) {
			if aChanged && a.written != nil {
				a.written(u)
			}
			if bChanged && b.written != nil {
				b.written(u)
			}
		}
	}
	return both
}

// statusWriter is the one place the scheduler writes QueueUnit status. Writes
// to the same unit coalesce (see enqueue). Decisions have a queue of their
// own and go first; informational writes are made when no decision waits, so
// under load the API's write budget goes to admissions.
//
// A write that fails is not forgotten: it is made again with a per-unit
// backoff until it lands, is no longer wanted, or its unit is gone. A
// permanent refusal (forbidden, invalid, too large) backs off the same way
// and is told once in an event, and other units keep moving. An admission
// whose outcome is unknown (a timeout, a lost connection) is made again on
// its old base: if it had landed, the API answers with a conflict and a
// fresh read shows it (write.landed), so its room is never given away while
// it may be in the API. Nothing is written while fence says the replica may
// have lost its lease; the client's transport checks the same fence again
// right before each request leaves (pkg/util/fence), and a write it kept
// back waits for a renewal like one kept back here. When the scheduler
// stops, the writer takes no more work and returns once the writes in
// flight have finished, so the lease is released after them.
type statusWriter struct {
	c client.Client
	// reader reads around the cache, to retry a conflict on fresh data.
	reader client.Reader
	decide workqueue.TypedRateLimitingInterface[schedtypes.UnitKey]
	inform workqueue.TypedRateLimitingInterface[schedtypes.UnitKey]
	// fence reports whether this replica may write (nil: always).
	fence func() bool
	// stopping is set once the writer takes no more work (run's ctx ended).
	stopping atomic.Bool
	// stop is run's ctx.Done(), set before its workers start: a worker
	// that finishes a write after the ctx ended, but before stopping is
	// set, must not begin the next one. Nil outside run.
	stop <-chan struct{}
	// refused is told of a permanent refusal, once per unit and error.
	refused func(u *schedv1alpha1.QueueUnit, err error)

	// idle is signalled when a decision worker leaves the decision queue
	// empty: informational writes may go on.
	idle chan struct{}

	mu      sync.Mutex
	pending map[schedtypes.UnitKey]*write
	// told is the refusal last told per unit and kind of write (toldKey).
	told map[schedtypes.UnitKey]string
}

// infoRetry is how long an informational write steps aside for decisions;
// fenceRetry how long a write waits for the lease to be renewed; drainLimit
// how long the writes in flight when the scheduler stops may take, where no
// fence ends them sooner.
const (
	infoRetry  = 200 * time.Millisecond
	fenceRetry = time.Second
	drainLimit = 10 * time.Second
)

// newStatusWriter writes through c, while fence allows (nil: always), and
// tells refused (may be nil) of permanent refusals. Its delays and backoffs
// pace writes for the API's sake; they are not deadlines a user waits for,
// and they run on the real clock, so a scheduler on a fake clock (tests)
// still writes.
func newStatusWriter(c client.Client, reader client.Reader, fence func() bool, refused func(*schedv1alpha1.QueueUnit, error)) *statusWriter {
	q := func(name string) workqueue.TypedRateLimitingInterface[schedtypes.UnitKey] {
		// Per unit: 5 ms doubling up to 5 minutes, for writes that fail.
		limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[schedtypes.UnitKey](5*time.Millisecond, 5*time.Minute)
		return workqueue.NewTypedRateLimitingQueueWithConfig(limiter, workqueue.TypedRateLimitingQueueConfig[schedtypes.UnitKey]{Name: name})
	}
	return &statusWriter{c: c, reader: reader, fence: fence, refused: refused, decide: q("queueunit-status"), inform: q("queueunit-status-info"),
		idle: make(chan struct{}, 1), pending: map[schedtypes.UnitKey]*write{}, told: map[schedtypes.UnitKey]string{}}
}

// merge is what waits for a unit once wr comes where old waits:
//   - an admission (a write with done) is never replaced: its owner waits
//     for it, and decides again once it is done;
//   - a decision is never replaced by an informational write;
//   - a decision that meets another decision is made with it, in order, in
//     one write: an eviction is not lost to a lifecycle move, nor the other
//     way round;
//   - anything else (information, or a decision in place of information)
//     replaces what was waiting.
func merge(old, wr *write) *write {
	switch {
	case old == nil || old == wr:
		return wr
	case old.done != nil, !old.info && wr.info:
		return old
	case !old.info && !wr.info:
		return old.then(wr)
	}
	return wr
}

// enqueue schedules wr for key after delay, merged with a write not yet
// made (see merge).
func (w *statusWriter) enqueue(key schedtypes.UnitKey, wr *write, delay time.Duration) {
	w.mu.Lock()
	old := w.pending[key]
	next := merge(old, wr)
	if next == old {
		w.mu.Unlock()
		return
	}
	if old != nil && !old.info && !wr.info {
		// The first of the two was due first.
		delay = 0
	}
	// The unit's turn, taken for an informational old, comes no later
	// than next's would (the queue keeps the earliest): next goes then,
	// and the queue is not asked again for every new report.
	taken := next.info && old != nil && old.info && old.after >= 0 && delay >= old.after
	if taken {
		next.after = old.after
	} else if next.info {
		next.after = delay
	}
	w.pending[key] = next
	w.mu.Unlock()
	if taken {
		return
	}
	q := w.queueOf(next)
	if delay > 0 {
		q.AddAfter(key, delay)
	} else {
		q.Add(key)
	}
}

func (w *statusWriter) queueOf(wr *write) workqueue.TypedRateLimitingInterface[schedtypes.UnitKey] {
	if wr.info {
		return w.inform
	}
	return w.decide
}

// enqueueUnlessPending schedules wr for key after delay unless a write for
// key waits already; it reports whether wr was queued. The test and the
// queueing are one step: a report queued between them is not replaced.
func (w *statusWriter) enqueueUnlessPending(key schedtypes.UnitKey, wr *write, delay time.Duration) bool {
	w.mu.Lock()
	if _, ok := w.pending[key]; ok {
		w.mu.Unlock()
		return false
	}
	if wr.info {
		wr.after = delay
	}
	w.pending[key] = wr
	w.mu.Unlock()
	w.queueOf(wr).AddAfter(key, delay)
	return true
}

// again puts back a write that was taken but not made, merged with any
// write that came for its unit meanwhile, after the unit's backoff (or
// after delay, when it is not 0).
func (w *statusWriter) again(key schedtypes.UnitKey, wr *write, delay time.Duration) {
	w.mu.Lock()
	next := wr
	if newer := w.pending[key]; newer != nil {
		// wr was due before newer: it goes first.
		next = merge(wr, newer)
	}
	next.after = -1
	w.pending[key] = next
	w.mu.Unlock()
	q := w.queueOf(next)
	if delay > 0 {
		q.AddAfter(key, delay)
	} else {
		q.AddRateLimited(key)
	}
}

// dropInfo forgets an informational write for key not made yet: what it
// would say is no longer wanted.
func (w *statusWriter) dropInfo(key schedtypes.UnitKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if wr, ok := w.pending[key]; ok && wr.info && wr.done == nil {
		delete(w.pending, key)
	}
}

// run writes with workers for decisions and a few for information, until
// ctx ends. Then it takes no more work, and returns once the writes in
// flight have finished: they run on a context of their own, which the
// fence's deadline (the client's transport) or drainLimit ends.
func (w *statusWriter) run(ctx context.Context, workers int) {
	w.stop = ctx.Done()
	writeCtx, cancelWrites := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWrites()
	go func() {
		<-ctx.Done()
		w.stopping.Store(true)
		w.decide.ShutDown()
		w.inform.ShutDown()
		t := time.NewTimer(drainLimit)
		defer t.Stop()
		select {
		case <-t.C:
			cancelWrites()
		case <-writeCtx.Done():
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for w.processNext(writeCtx, w.decide, false) {
				if w.decide.Len() == 0 {
					select {
					case w.idle <- struct{}{}:
					default:
					}
				}
			}
		})
	}
	for range max(workers/4, 1) {
		wg.Go(func() {
			for w.awaitDecisions(ctx) && w.processNext(writeCtx, w.inform, true) {
			}
		})
	}
	wg.Wait()
}

// awaitDecisions holds an informational worker until no decision waits (or
// ctx ends: false). The worker waits before it takes a write, not after:
// thousands of waiting reports taken and put back every infoRetry cost the
// scheduler a third of its CPU in the baseline run.
func (w *statusWriter) awaitDecisions(ctx context.Context) bool {
	for w.decide.Len() > 0 {
		t := time.NewTimer(infoRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-w.idle:
		case <-t.C:
		}
		t.Stop()
	}
	return true
}

// stopped reports whether run's ctx ended.
func (w *statusWriter) stopped() bool {
	select {
	case <-w.stop:
		return true
	default:
		return false
	}
}

func (w *statusWriter) processNext(ctx context.Context, q workqueue.TypedRateLimitingInterface[schedtypes.UnitKey], info bool) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(key)
	if info && w.decide.Len() > 0 {
		// Decisions came while the worker waited for this write: come back
		// when they are written (the worker waits for them before it takes
		// the next one).
		q.AddAfter(key, infoRetry)
		return true
	}
	w.mu.Lock()
	wr := w.pending[key]
	if wr != nil && wr.info != info {
		// The pending write belongs to the other queue now.
		wr = nil
	}
	if wr != nil {
		delete(w.pending, key)
	}
	w.mu.Unlock()
	if wr == nil {
		return true
	}
	if w.stopping.Load() || w.stopped() {
		// The scheduler stops: what is not in flight yet is not written.
		w.finish(key, q, wr, nil, context.Canceled)
		return true
	}
	if w.fence != nil && !w.fence() {
		// The lease may be another replica's by now: write nothing until it
		// is renewed (or the process ends on losing it).
		w.again(key, wr, fenceRetry)
		return true
	}
	if wr.done != nil && mutation.Strikes(mutation.LostAdmission) {
		// Planted bug: the admission is forgotten, its quota held.
		return true
	}
	written, err := w.apply(ctx, wr)
	if err == nil && wr.done != nil && mutation.Strikes(mutation.DoubleAdmission) {
		// Planted bug: the landed admission's answer reads as a conflict.
		err = apierrors.NewConflict(schedv1alpha1.Resource("queueunits"), wr.base.Name, errors.New("planted"))
	}
	if err == nil || apierrors.IsNotFound(err) || ctx.Err() != nil {
		w.finish(key, q, wr, written, err)
		return true
	}
	log := klog.FromContext(ctx).WithValues("unit", key)
	switch {
	case wr.done != nil && apierrors.IsConflict(err):
		// An earlier attempt may have landed with its answer lost.
		fresh := &schedv1alpha1.QueueUnit{}
		switch gerr := w.reader.Get(ctx, client.ObjectKeyFromObject(wr.base), fresh); {
		case gerr == nil && wr.landed != nil && wr.landed(fresh) && !mutation.On(mutation.DoubleAdmission):
			w.finish(key, q, wr, fresh, nil)
		case gerr == nil || apierrors.IsNotFound(gerr):
			w.finish(key, q, wr, nil, err)
		default:
			log.V(2).Info("Outcome of an admission unknown; reading again", "err", gerr)
			w.again(key, wr, 0)
		}
	case errors.Is(err, fence.ErrFenced):
		// The transport kept it back, unsent: as above.
		log.V(2).Info("QueueUnit status write kept back by the fence", "err", err)
		w.again(key, wr, fenceRetry)
	case permanent(err):
		w.tell(key, wr, err)
		if wr.done != nil {
			// The owner decides what a refused admission becomes.
			w.finish(key, q, wr, nil, err)
			return true
		}
		w.again(key, wr, 0)
	default:
		// A timeout, a lost connection, an overloaded server, a conflict
		// retried too often: the outcome is unknown or the write may land
		// later; make it again (an admission on its old base, see above).
		log.V(2).Info("QueueUnit status write failed; retrying", "err", err)
		w.again(key, wr, 0)
	}
	return true
}

// finish ends a write whose outcome is known.
func (w *statusWriter) finish(key schedtypes.UnitKey, q workqueue.TypedRateLimitingInterface[schedtypes.UnitKey], wr *write, written *schedv1alpha1.QueueUnit, err error) {
	q.Forget(key)
	if err == nil {
		w.mu.Lock()
		delete(w.told, toldKey(key, wr))
		w.mu.Unlock()
	}
	if err == nil && written != nil && wr.written != nil {
		wr.written(written)
	}
	if wr.done != nil {
		wr.done(written, err)
	}
}

// toldKey tells admissions and other writes of a unit apart: a report that
// lands does not mean the refused admission would now.
func toldKey(key schedtypes.UnitKey, wr *write) schedtypes.UnitKey {
	if wr.done != nil {
		return key + "#admission"
	}
	return key
}

// tell reports a permanent refusal once per unit and error, until a write
// of its kind lands.
func (w *statusWriter) tell(key schedtypes.UnitKey, wr *write, err error) {
	u := wr.base
	key = toldKey(key, wr)
	w.mu.Lock()
	first := w.told[key] != err.Error()
	w.told[key] = err.Error()
	w.mu.Unlock()
	if first && w.refused != nil {
		w.refused(u, err)
	}
}

// permanent reports whether the API refused a write for what it is, so
// making it again at once cannot help.
func permanent(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsRequestEntityTooLargeError(err) ||
		apierrors.IsBadRequest(err) || apierrors.IsUnauthorized(err) || apierrors.IsMethodNotSupported(err)
}

func (w *statusWriter) apply(ctx context.Context, wr *write) (*schedv1alpha1.QueueUnit, error) {
	base := wr.base
	for attempt := 0; ; attempt++ {
		obj := base.DeepCopy()
		if !wr.mutate(obj) {
			return nil, nil
		}
		meta := unitMeta(obj)
		patch := &statusPatch{base: base, to: obj}
		err := w.c.Status().Patch(ctx, meta, patch)
		if err == nil {
			asServed(obj, meta, patch.sent)
			return obj, nil
		}
		// Planted bug: an admission that conflicts is made again on the
		// fresh object instead of being decided again.
		retry := wr.retryOnConflict || (wr.done != nil && mutation.On(mutation.DoubleAdmission))
		if !apierrors.IsConflict(err) || !retry || attempt >= 3 {
			return nil, err
		}
		fresh := &schedv1alpha1.QueueUnit{}
		if err := w.reader.Get(ctx, client.ObjectKeyFromObject(base), fresh); err != nil {
			return nil, err
		}
		base = fresh
	}
}
