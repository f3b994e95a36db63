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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/admissioncheck"
	"github.com/koordinator-sh/koord-queue/pkg/features"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// lifecycle is the controller that moves units that hold quota through the
// states the scheduler owns: Reserved (admission checks), its own
// TimeoutBackoff, and the evictions for deactivation and the execution
// budget. It runs --admissionCheckControllerWorker workers over a queue of
// unit keys; every deadline is a delayed key on the scheduler's clock.
type lifecycle struct {
	*env
	cache   *unitCache
	reports *reporter
	queue   workqueue.TypedRateLimitingInterface[schedtypes.UnitKey]
}

func newLifecycle(e *env, cache *unitCache, reports *reporter) *lifecycle {
	return &lifecycle{env: e, cache: cache, reports: reports, queue: newLifecycleQueue(e.clock)}
}

// newLifecycleQueue runs its delays on clk, so every deadline the controller
// keeps (check timeout, backoff end, execution budget) follows the
// scheduler's clock.
func newLifecycleQueue(clk Clock) workqueue.TypedRateLimitingInterface[schedtypes.UnitKey] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[schedtypes.UnitKey](),
		workqueue.TypedRateLimitingQueueConfig[schedtypes.UnitKey]{Name: "queueunit-lifecycle", Clock: clk})
}

// needs reports whether the controller has something to watch on u.
func (l *lifecycle) needs(u *schedv1alpha1.QueueUnit) bool {
	g := l.opts.Gates
	switch {
	case u.DeletionTimestamp != nil:
		return false
	case l.evictionTimeout() > 0 && queueunit.IsEvicting(u):
		return true
	case u.Status.Phase == schedv1alpha1.QueueUnitPhaseReserved, queueunit.InChecksBackoff(u):
		return true
	case g.QueueUnitActive && !queueunit.IsActive(u) && queueunit.HoldsQuota(u.Status.Phase):
		return true
	case g.MaximumExecutionTime && u.Status.Phase == schedv1alpha1.QueueUnitPhaseRunning && queueunit.Budget(u) > 0:
		return true
	case g.QueueUnitRequeueState && u.Status.Phase == schedv1alpha1.QueueUnitPhaseRunning && u.Status.RequeueState != nil:
		return true
	}
	return false
}

var _ unitFollower = (*lifecycle)(nil)

// unitChanged looks at a changed unit soon when there is something to watch
// on it.
func (l *lifecycle) unitChanged(ch unitChange) {
	if ch.seen() && l.needs(ch.new) {
		l.queue.Add(ch.key)
	}
}

// admissionCheckHandlers look again at every reserved unit when an
// AdmissionCheck changes.
func (l *lifecycle) admissionCheckHandlers() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { l.recheckReserved() },
		UpdateFunc: func(_, _ any) { l.recheckReserved() },
		DeleteFunc: func(any) { l.recheckReserved() },
	}
}

// recheckReserved looks again at every reserved unit (an AdmissionCheck changed).
func (l *lifecycle) recheckReserved() {
	var keys []schedtypes.UnitKey
	l.cache.each(func(r unitRecord) {
		if r.obj.Status.Phase == schedv1alpha1.QueueUnitPhaseReserved {
			keys = append(keys, r.key)
		}
	})
	for _, k := range keys {
		l.queue.Add(k)
	}
}

func (l *lifecycle) run(ctx context.Context, workers int) {
	go func() {
		<-ctx.Done()
		l.queue.ShutDown()
	}()
	for range workers {
		go func() {
			for l.processNext(ctx) {
			}
		}()
	}
}

func (l *lifecycle) processNext(ctx context.Context) bool {
	key, shutdown := l.queue.Get()
	if shutdown {
		return false
	}
	defer l.queue.Done(key)
	u, inflight := l.cache.object(key)
	if u == nil || inflight {
		return true
	}
	if after := l.reconcile(ctx, u); after > 0 {
		l.queue.AddAfter(key, after)
	}
	return true
}

// reconcile acts on one unit and returns when to look again (0: on change).
func (l *lifecycle) reconcile(ctx context.Context, u *schedv1alpha1.QueueUnit) time.Duration {
	now := l.clock.Now()
	g := l.opts.Gates
	switch {
	case l.evictionTimeout() > 0 && queueunit.IsEvicting(u):
		return l.reconcileEvicting(u, now)
	case g.QueueUnitActive && !queueunit.IsActive(u) && queueunit.HoldsQuota(u.Status.Phase):
		l.reports.evict(u, schedv1alpha1.ReasonDeactivated, "Deactivated: spec.active is false")
		return 0
	case u.Status.Phase == schedv1alpha1.QueueUnitPhaseReserved:
		return l.reconcileReserved(ctx, u, now)
	case queueunit.InChecksBackoff(u):
		return l.reconcileBackoff(u, now)
	case u.Status.Phase == schedv1alpha1.QueueUnitPhaseRunning:
		if g.QueueUnitRequeueState && u.Status.RequeueState != nil {
			l.reports.writeStatus(u, func(x *schedv1alpha1.QueueUnit) bool {
				if x.Status.Phase != schedv1alpha1.QueueUnitPhaseRunning || x.Status.RequeueState == nil {
					return false
				}
				x.Status.RequeueState = nil
				return true
			}, nil)
		}
		if budget := queueunit.Budget(u); g.MaximumExecutionTime && budget > 0 {
			used := queueunit.ExecutionUsed(u, now)
			if used >= budget {
				l.reports.evict(u, schedv1alpha1.ReasonMaximumExecutionTimeExceeded,
					fmt.Sprintf("Execution budget of %s used up", budget))
				return 0
			}
			return budget - used
		}
	}
	return 0
}

func (l *lifecycle) checksOf(u *schedv1alpha1.QueueUnit) map[string]admissioncheck.Check {
	out := map[string]admissioncheck.Check{}
	for _, st := range u.Status.AdmissionChecks {
		ac := &schedv1alpha1.AdmissionCheck{}
		if err := l.client.Get(context.Background(), client.ObjectKey{Name: st.Name}, ac); err != nil { //nolint:forbidigo // a read of the informer cache, which does not wait
			continue
		}
		out[st.Name] = admissioncheck.Check{Exists: true, RetryDelay: time.Duration(ptr.Deref(ac.Spec.RetryDelayMinutes, 0)) * time.Minute}
	}
	return out
}

func (l *lifecycle) backoffFor(u *schedv1alpha1.QueueUnit) (time.Duration, int32) {
	if !l.opts.Gates.QueueUnitRequeueState {
		return admissioncheck.BackoffBase, 0
	}
	n := int32(1)
	if u.Status.RequeueState != nil && u.Status.RequeueState.Count != nil {
		n = *u.Status.RequeueState.Count + 1
	}
	return admissioncheck.BackoffFor(n, admissioncheck.RandomJitter()), n
}

func (l *lifecycle) reconcileReserved(ctx context.Context, u *schedv1alpha1.QueueUnit, now time.Time) time.Duration {
	backoff, count := l.backoffFor(u)
	d := admissioncheck.Decide(u, l.checksOf(u), now, l.opts.Config.AdmissionCheckTimeout.Duration, backoff)
	switch d.Action {
	case admissioncheck.Admit:
		for _, c := range u.Status.AdmissionChecks {
			l.opts.Metrics.AdmissionCheck(c.Name, string(schedv1alpha1.CheckStateReady))
		}
		l.reports.writeStatus(u, func(x *schedv1alpha1.QueueUnit) bool {
			if x.Status.Phase != schedv1alpha1.QueueUnitPhaseReserved || admissioncheck.Decide(x, l.checksOf(x), now, 0, 0).Action != admissioncheck.Admit {
				return false
			}
			return queueunit.MarkChecksReady(x, metav1.NewTime(now))
		}, nil)
		return 0
	case admissioncheck.Backoff:
		outcome := map[string]string{queueunit.ReasonAdmissionCheckRetry: "Retry", queueunit.ReasonAdmissionCheckRejected: "Rejected", queueunit.ReasonAdmissionCheckTimeout: "Timeout"}[d.Reason]
		// Told once the move is in the API: a unit looked at again before
		// that (an AdmissionCheck changed) is not told twice.
		moved := func(x *schedv1alpha1.QueueUnit) {
			for _, c := range u.Status.AdmissionChecks {
				if c.State != schedv1alpha1.CheckStateReady {
					l.opts.Metrics.AdmissionCheck(c.Name, outcome)
				}
			}
			l.recorder.Event(x, corev1.EventTypeWarning, d.Reason, d.Message+"; the reservation is released until "+d.RequeueAt.UTC().Format(time.RFC3339))
		}
		l.reports.writeStatus(u, func(x *schedv1alpha1.QueueUnit) bool {
			return queueunit.MarkChecksBackoff(x, d.Reason, d.Message, d.RequeueAt, count, metav1.NewTime(now))
		}, moved)
		return 0
	}
	if len(d.Missing) > 0 {
		l.reports.checkMissing(u, d.Message)
	}
	if u.Status.Message != d.Message {
		msg := d.Message
		// Only informs: it yields to decisions and is replaced by any later write.
		l.reports.inform(u, func(x *schedv1alpha1.QueueUnit) bool {
			if x.Status.Phase != schedv1alpha1.QueueUnitPhaseReserved || x.Status.Message == msg {
				return false
			}
			x.Status.Message = msg
			return true
		})
	}
	return d.RequeueAfter
}

func (l *lifecycle) reconcileBackoff(u *schedv1alpha1.QueueUnit, now time.Time) time.Duration {
	if rs := u.Status.RequeueState; rs != nil && rs.RequeueAt != nil && now.Before(rs.RequeueAt.Time) {
		return rs.RequeueAt.Sub(now)
	}
	l.reports.writeStatus(u, func(x *schedv1alpha1.QueueUnit) bool {
		return queueunit.EndChecksBackoff(x, metav1.NewTime(now))
	}, nil)
	return 0
}

// budgetUsedUp reports whether a unit may not run again at now: its
// execution budget is spent (feature gate MaximumExecutionTime).
func budgetUsedUp(g features.Gates, u *schedv1alpha1.QueueUnit, now time.Time) bool {
	b := queueunit.Budget(u)
	return g.MaximumExecutionTime && b > 0 && queueunit.ExecutionUsed(u, now) >= b
}

// evictionTimeout is the configured evictionTimeout (0: off).
func (l *lifecycle) evictionTimeout() time.Duration {
	if t := l.opts.Config.EvictionTimeout; t != nil {
		return t.Duration
	}
	return 0
}

// reconcileEvicting hands an evicted unit back to its queue once it has kept
// its quota for evictionTimeout: step 2 of the eviction (docs/protocol.md),
// done by the scheduler because nobody else did (a unit of a kind no job
// extension manages, an extension that is down). Until then it returns the
// time left.
func (l *lifecycle) reconcileEvicting(u *schedv1alpha1.QueueUnit, now time.Time) time.Duration {
	c := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionEvicted)
	timeout := l.evictionTimeout()
	if left := c.LastTransitionTime.Add(timeout).Sub(now); left > 0 {
		return left
	}
	message := fmt.Sprintf("evicted at %s (%s) but still holding quota after evictionTimeout %s: no job extension handed it back; "+
		"the scheduler requeued it and released its quota (pods of its job that still run count as usage by pods koord-queue does not manage)",
		c.LastTransitionTime.UTC().Format(time.RFC3339), c.Reason, timeout)
	l.reports.writeStatus(u, func(x *schedv1alpha1.QueueUnit) bool {
		if !queueunit.IsEvicting(x) {
			return false
		}
		queueunit.Requeue(x, schedv1alpha1.ReasonEvictionTimeout, message, metav1.NewTime(l.clock.Now()))
		return true
	}, func(x *schedv1alpha1.QueueUnit) {
		l.recorder.Event(x, corev1.EventTypeWarning, schedv1alpha1.ReasonEvictionTimeout, message)
	})
	return 0
}
