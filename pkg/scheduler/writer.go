package scheduler

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// write is one status change to make on a unit.
type write struct {
	// base is the object the decision was made on; the patch is computed
	// against it and carries its resourceVersion, so a unit that changed
	// since is not overwritten.
	base *v1alpha1.QueueUnit
	// mutate applies the change to a copy of base; false means the change is
	// no longer wanted on this object (nothing is written).
	mutate func(u *v1alpha1.QueueUnit) bool
	// retryOnConflict re-reads and re-applies mutate on a conflict; a write
	// that carries a decision (an admission) must not, and is reported instead.
	retryOnConflict bool
	// info marks a write that only informs (a first phase, why a unit waits):
	// it waits while decisions (admissions, evictions, lifecycle moves) are
	// being written, and a later write to the same unit replaces it.
	info bool
	// done learns the outcome: the written object, or the error.
	done func(written *v1alpha1.QueueUnit, err error)
	// written runs once the change is in the API (events go here, so a write
	// that never happens records nothing).
	written func(u *v1alpha1.QueueUnit)
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
		mutate: func(u *v1alpha1.QueueUnit) bool {
			aChanged = a.mutate(u)
			bChanged = b.mutate(u)
			return aChanged || bChanged
		},
	}
	if a.written != nil || b.written != nil {
		both.written = func(u *v1alpha1.QueueUnit) {
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
// to the same unit coalesce: only the newest is made. Decisions have a queue
// of their own and go first; informational writes are made when no decision
// waits, so under load the API's write budget goes to admissions.
type statusWriter struct {
	c client.Client
	// reader reads around the cache, to retry a conflict on fresh data.
	reader  client.Reader
	decide  workqueue.TypedRateLimitingInterface[string]
	inform  workqueue.TypedRateLimitingInterface[string]
	mu      sync.Mutex
	pending map[string]*write
}

// infoRetry is how long an informational write steps aside for decisions.
const infoRetry = 200 * time.Millisecond

func newStatusWriter(c client.Client, reader client.Reader) *statusWriter {
	q := func(name string) workqueue.TypedRateLimitingInterface[string] {
		return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name})
	}
	return &statusWriter{c: c, reader: reader, decide: q("queueunit-status"), inform: q("queueunit-status-info"), pending: map[string]*write{}}
}

// enqueue schedules wr for key after delay, in place of a write not yet
// made:
//   - an admission (a write with done) is never replaced: its owner waits
//     for it, and decides again once it is done;
//   - a decision is never replaced by an informational write;
//   - a decision that meets another decision is made with it, in order, in
//     one write: an eviction is not lost to a lifecycle move, nor the other
//     way round;
//   - anything else (information, or a decision in place of information)
//     replaces what was waiting.
func (w *statusWriter) enqueue(key string, wr *write, delay time.Duration) {
	w.mu.Lock()
	if old, ok := w.pending[key]; ok && old != wr {
		switch {
		case old.done != nil, !old.info && wr.info:
			w.mu.Unlock()
			return
		case !old.info && !wr.info:
			wr = old.then(wr)
			// The first of the two was due first.
			delay = 0
		}
	}
	w.pending[key] = wr
	w.mu.Unlock()
	q := w.decide
	if wr.info {
		q = w.inform
	}
	if delay > 0 {
		q.AddAfter(key, delay)
	} else {
		q.Add(key)
	}
}

// dropInfo forgets an informational write for key not made yet: what it
// would say is no longer wanted.
func (w *statusWriter) dropInfo(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if wr, ok := w.pending[key]; ok && wr.info && wr.done == nil {
		delete(w.pending, key)
	}
}

// has reports whether a write for key is waiting.
func (w *statusWriter) has(key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.pending[key]
	return ok
}

// run writes with workers for decisions and a few for information.
func (w *statusWriter) run(ctx context.Context, workers int) {
	go func() {
		<-ctx.Done()
		w.decide.ShutDown()
		w.inform.ShutDown()
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for w.processNext(ctx, w.decide, false) {
			}
		})
	}
	for range max(workers/4, 1) {
		wg.Go(func() {
			for w.processNext(ctx, w.inform, true) {
			}
		})
	}
	wg.Wait()
}

func (w *statusWriter) processNext(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], info bool) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(key)
	if info && w.decide.Len() > 0 {
		// Decisions first: come back when they are written.
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
	written, err := w.apply(ctx, wr)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
		klog.FromContext(ctx).V(2).Info("QueueUnit status write failed", "unit", key, "err", err)
	}
	if err == nil && written != nil && wr.written != nil {
		wr.written(written)
	}
	if wr.done != nil {
		wr.done(written, err)
	}
	return true
}

func (w *statusWriter) apply(ctx context.Context, wr *write) (*v1alpha1.QueueUnit, error) {
	base := wr.base
	for attempt := 0; ; attempt++ {
		obj := base.DeepCopy()
		if !wr.mutate(obj) {
			return nil, nil
		}
		err := w.c.Status().Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		if err == nil {
			return obj, nil
		}
		if !apierrors.IsConflict(err) || !wr.retryOnConflict || attempt >= 3 {
			return nil, err
		}
		fresh := &v1alpha1.QueueUnit{}
		if err := w.reader.Get(ctx, client.ObjectKeyFromObject(base), fresh); err != nil {
			return nil, err
		}
		base = fresh
	}
}
