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

package harness

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// extension plays koord-queue-controllers for fake jobs (docs/protocol.md):
// a Dequeued unit is written Running at once and Succeed after its runtime;
// an evicted unit is written back to Enqueued with its admissions cleared.
type extension struct {
	c     client.Client
	rec   *Recorder
	queue workqueue.TypedRateLimitingInterface[string]
	// writeErrors counts failed writes other than conflicts.
	mu          sync.Mutex
	writeErrors int
	lastError   error
	// updates counts every change of a unit seen through the watch;
	// harnessWrites counts ours. The rest are the scheduler's.
	updates, harnessWrites int
	// kueue is ModeKueue: no Running write; the runtime counts from the
	// observed admission and then the unit is marked finished, as Kueue's
	// runner does.
	kueue bool
}

func newExtension(c client.Client, rec *Recorder) *extension {
	return &extension{
		c: c, rec: rec,
		// Only per-item backoff: a shared token bucket would throttle the
		// harness, not the scheduler.
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "perf-extension"}),
	}
}

// start registers the event handler on the cache's QueueUnit informer.
func (e *extension) start(ctx context.Context, ca cache.Cache) error {
	inf, err := ca.GetInformer(ctx, &schedv1alpha1.QueueUnit{})
	if err != nil {
		return fmt.Errorf("queueunit informer: %w", err)
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: e.observe,
		UpdateFunc: func(old, obj any) {
			o, ok1 := old.(*schedv1alpha1.QueueUnit)
			n, ok2 := obj.(*schedv1alpha1.QueueUnit)
			if ok1 && ok2 && o.ResourceVersion != n.ResourceVersion {
				e.mu.Lock()
				e.updates++
				e.mu.Unlock()
			}
			e.observe(obj)
		},
	})
	return err
}

func rvOf(u *schedv1alpha1.QueueUnit) int64 {
	v, _ := strconv.ParseInt(u.ResourceVersion, 10, 64)
	return v
}

func isEvicted(u *schedv1alpha1.QueueUnit) bool {
	return meta.IsStatusConditionTrue(u.Status.Conditions, schedv1alpha1.ConditionEvicted)
}

// observe records what the scheduler did (first sight of an admission) and
// hands the unit to a worker. It ignores objects older than our own writes.
func (e *extension) observe(obj any) {
	u, ok := obj.(*schedv1alpha1.QueueUnit)
	if !ok {
		return
	}
	now := time.Now()
	e.rec.mu.Lock()
	r := e.rec.units[u.Name]
	if r != nil && r.firstSeen.IsZero() {
		r.firstSeen = now
	}
	if r == nil || rvOf(u) <= r.writtenRV {
		e.rec.mu.Unlock()
		return
	}
	r.latest = u
	// A unit may be preempted before we ever saw it admitted: it still was
	// charged, and still needs to be suspended and handed back.
	if r.state == statePending && u.Status.Phase == schedv1alpha1.QueueUnitPhaseDequeued {
		r.state = stateAdmitted
		r.admissions++
		r.lastAdmitted, r.chargeFrom = now, now
		if r.firstAdmitted.IsZero() {
			r.firstAdmitted = now
		}
		e.rec.lastEvent = now
	}
	e.rec.mu.Unlock()
	e.queue.Add(u.Name)
}

func (e *extension) run(ctx context.Context, workers int) {
	go func() {
		<-ctx.Done()
		e.queue.ShutDown()
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				key, quit := e.queue.Get()
				if quit {
					return
				}
				e.handle(ctx, key)
				e.queue.Done(key)
			}
		})
	}
	wg.Wait()
}

// handle decides one write from the extension's state and the newest object,
// makes it with optimistic locking, and records its outcome.
func (e *extension) handle(ctx context.Context, key string) {
	e.rec.mu.Lock()
	r := e.rec.units[key]
	if r == nil || r.latest == nil {
		e.rec.mu.Unlock()
		return
	}
	base := r.latest.(*schedv1alpha1.QueueUnit)
	state, runSince, runtime, admittedAt := r.state, r.runSince, r.runtime, r.lastAdmitted
	e.rec.mu.Unlock()
	finish := func(u *schedv1alpha1.QueueUnit) {
		u.Status.Phase = schedv1alpha1.QueueUnitPhaseSucceed
		u.Status.PodState = nil
		meta.SetStatusCondition(&u.Status.Conditions, metav1.Condition{Type: schedv1alpha1.ConditionFinished, Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "fake job finished"})
	}

	evicted := isEvicted(base)
	var next unitState
	var mutate func(*schedv1alpha1.QueueUnit)
	switch {
	case evicted && (state == stateAdmitted || state == stateRunning) &&
		(base.Status.Phase == schedv1alpha1.QueueUnitPhaseDequeued || base.Status.Phase == schedv1alpha1.QueueUnitPhaseRunning):
		next = statePending
		mutate = func(u *schedv1alpha1.QueueUnit) {
			u.Status.Phase = schedv1alpha1.QueueUnitPhaseEnqueued
			u.Status.Admissions, u.Status.PodState, u.Status.ReclaimablePods = nil, nil, nil
			for _, c := range []string{schedv1alpha1.ConditionQuotaReserved, schedv1alpha1.ConditionAdmitted, schedv1alpha1.ConditionPodsReady} {
				meta.SetStatusCondition(&u.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionFalse, Reason: "Evicted", Message: "fake job suspended"})
			}
		}
	case e.kueue && !evicted && state == stateAdmitted && base.Status.Phase == schedv1alpha1.QueueUnitPhaseDequeued:
		if wait := time.Until(admittedAt.Add(runtime)); wait > 0 {
			e.queue.AddAfter(key, wait)
			return
		}
		next, mutate = stateDone, finish
	case !evicted && state == stateAdmitted && base.Status.Phase == schedv1alpha1.QueueUnitPhaseDequeued:
		next = stateRunning
		mutate = func(u *schedv1alpha1.QueueUnit) {
			u.Status.Phase = schedv1alpha1.QueueUnitPhaseRunning
			u.Status.PodState = &schedv1alpha1.PodState{Running: 1}
			meta.SetStatusCondition(&u.Status.Conditions, metav1.Condition{Type: schedv1alpha1.ConditionPodsReady, Status: metav1.ConditionTrue, Reason: "PodsReady", Message: "fake pods running"})
		}
	case !evicted && state == stateRunning && base.Status.Phase == schedv1alpha1.QueueUnitPhaseRunning:
		if wait := time.Until(runSince.Add(runtime)); wait > 0 {
			e.queue.AddAfter(key, wait)
			return
		}
		next, mutate = stateDone, finish
	default:
		return
	}

	obj := base.DeepCopy()
	mutate(obj)
	// A release is dated when it is sent: the scheduler cannot act on it
	// earlier, so an admission it allows is always first seen later.
	sent := time.Now()
	err := e.c.Status().Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	now := time.Now()
	if err != nil {
		if !apierrors.IsConflict(err) && ctx.Err() == nil {
			e.mu.Lock()
			e.writeErrors++
			e.lastError = err
			e.mu.Unlock()
		}
		// A newer object is on its way through the informer; decide again
		// then, or after the backoff if it never comes.
		e.queue.AddRateLimited(key)
		return
	}
	e.queue.Forget(key)
	e.mu.Lock()
	e.harnessWrites++
	e.mu.Unlock()

	e.rec.mu.Lock()
	defer e.rec.mu.Unlock()
	r.writtenRV = rvOf(obj)
	r.latest = obj
	r.state = next
	e.rec.lastEvent = now
	switch next {
	case statePending:
		r.evictions++
		reason := "Unknown"
		if c := meta.FindStatusCondition(base.Status.Conditions, schedv1alpha1.ConditionEvicted); c != nil {
			reason = c.Reason
		}
		e.rec.evictions[reason]++
		e.rec.closeCharge(r, sent, reason)
	case stateRunning:
		r.runSince = now
		e.queue.AddAfter(key, runtime)
	case stateDone:
		e.rec.finish(r, sent)
	}
}

func (e *extension) errors() (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.writeErrors, e.lastError
}

// schedulerUnitWrites are the changes of units the harness did not make.
func (e *extension) schedulerUnitWrites() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.updates - e.harnessWrites
}
