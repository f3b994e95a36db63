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
	// done learns the outcome: the written object, or the error.
	done func(written *v1alpha1.QueueUnit, err error)
}

// statusWriter is the one place the scheduler writes QueueUnit status. Writes
// to the same unit coalesce: only the newest is made.
type statusWriter struct {
	c client.Client
	// reader reads around the cache, to retry a conflict on fresh data.
	reader  client.Reader
	queue   workqueue.TypedRateLimitingInterface[string]
	mu      sync.Mutex
	pending map[string]*write
}

func newStatusWriter(c client.Client, reader client.Reader) *statusWriter {
	return &statusWriter{
		c: c, reader: reader,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "queueunit-status"}),
		pending: map[string]*write{},
	}
}

// enqueue schedules w for key after delay, replacing a write not yet made.
func (w *statusWriter) enqueue(key string, wr *write, delay time.Duration) {
	w.mu.Lock()
	if old, ok := w.pending[key]; ok && old.done != nil && old != wr {
		// A write that carries a decision (an admission) is never replaced:
		// its owner waits for its outcome.
		w.mu.Unlock()
		return
	}
	w.pending[key] = wr
	w.mu.Unlock()
	if delay > 0 {
		w.queue.AddAfter(key, delay)
	} else {
		w.queue.Add(key)
	}
}

// has reports whether a write for key is waiting.
func (w *statusWriter) has(key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.pending[key]
	return ok
}

func (w *statusWriter) run(ctx context.Context, workers int) {
	go func() {
		<-ctx.Done()
		w.queue.ShutDown()
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for w.processNext(ctx) {
			}
		})
	}
	wg.Wait()
}

func (w *statusWriter) processNext(ctx context.Context) bool {
	key, shutdown := w.queue.Get()
	if shutdown {
		return false
	}
	defer w.queue.Done(key)
	w.mu.Lock()
	wr := w.pending[key]
	delete(w.pending, key)
	w.mu.Unlock()
	if wr == nil {
		return true
	}
	written, err := w.apply(ctx, wr)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
		klog.FromContext(ctx).V(2).Info("QueueUnit status write failed", "unit", key, "err", err)
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
