package scheduler

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/admissioncheck"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
)

// The lifecycle controller moves units that hold quota through the states the
// scheduler owns: Reserved (admission checks), its own TimeoutBackoff, and the
// evictions for deactivation and the execution budget. It runs
// --admissionCheckControllerWorker workers over a queue of unit keys.

// newLifecycleQueue runs its delays on clk, so every deadline the controller
// keeps (check timeout, backoff end, execution budget) follows the
// scheduler's clock.
func newLifecycleQueue(clk Clock) workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "queueunit-lifecycle", Clock: clk})
}

// needsLifecycle reports whether the controller has something to watch on u.
func (s *Scheduler) needsLifecycle(u *v1alpha1.QueueUnit) bool {
	g := s.opts.Gates
	switch {
	case u.DeletionTimestamp != nil:
		return false
	case u.Status.Phase == v1alpha1.QueueUnitPhaseReserved, admissioncheck.OwnBackoff(u):
		return true
	case g.QueueUnitActive && !ptr.Deref(u.Spec.Active, true) && queueunit.HoldsQuota(u.Status.Phase):
		return true
	case g.MaximumExecutionTime && u.Status.Phase == v1alpha1.QueueUnitPhaseRunning && admissioncheck.Budget(u) > 0:
		return true
	case g.QueueUnitRequeueState && u.Status.Phase == v1alpha1.QueueUnitPhaseRunning && u.Status.RequeueState != nil:
		return true
	}
	return false
}

func (s *Scheduler) watchAdmissionChecks(ctx context.Context) error {
	inf, err := s.cache.GetInformer(ctx, &v1alpha1.AdmissionCheck{})
	if err != nil {
		return fmt.Errorf("watch AdmissionChecks: %w", err)
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.recheckReserved() },
		UpdateFunc: func(_, _ any) { s.recheckReserved() },
		DeleteFunc: func(any) { s.recheckReserved() },
	})
	if err != nil {
		return err
	}
	s.registrations = append(s.registrations, reg)
	return nil
}

// recheckReserved looks again at every reserved unit (an AdmissionCheck changed).
func (s *Scheduler) recheckReserved() {
	s.mu.Lock()
	var keys []string
	for key, st := range s.units {
		if st.obj.Status.Phase == v1alpha1.QueueUnitPhaseReserved {
			keys = append(keys, key)
		}
	}
	s.mu.Unlock()
	for _, k := range keys {
		s.lifecycle.Add(k)
	}
}

func (s *Scheduler) runLifecycle(ctx context.Context, workers int) {
	go func() {
		<-ctx.Done()
		s.lifecycle.ShutDown()
	}()
	for range workers {
		go func() {
			for s.processLifecycle(ctx) {
			}
		}()
	}
}

func (s *Scheduler) processLifecycle(ctx context.Context) bool {
	key, shutdown := s.lifecycle.Get()
	if shutdown {
		return false
	}
	defer s.lifecycle.Done(key)
	s.mu.Lock()
	st := s.units[key]
	var u *v1alpha1.QueueUnit
	if st != nil && !st.inflight {
		u = st.obj
	}
	s.mu.Unlock()
	if u == nil {
		return true
	}
	if after := s.reconcileLifecycle(ctx, u); after > 0 {
		s.lifecycle.AddAfter(key, after)
	}
	return true
}

// reconcileLifecycle acts on one unit and returns when to look again (0: on change).
func (s *Scheduler) reconcileLifecycle(ctx context.Context, u *v1alpha1.QueueUnit) time.Duration {
	now := s.clock.Now()
	g := s.opts.Gates
	switch {
	case g.QueueUnitActive && !ptr.Deref(u.Spec.Active, true) && queueunit.HoldsQuota(u.Status.Phase):
		s.evict(u, v1alpha1.ReasonDeactivated, "Deactivated: spec.active is false")
		return 0
	case u.Status.Phase == v1alpha1.QueueUnitPhaseReserved:
		return s.reconcileReserved(ctx, u, now)
	case admissioncheck.OwnBackoff(u):
		return s.reconcileBackoff(u, now)
	case u.Status.Phase == v1alpha1.QueueUnitPhaseRunning:
		if g.QueueUnitRequeueState && u.Status.RequeueState != nil {
			s.writeStatus(u, func(x *v1alpha1.QueueUnit) bool {
				if x.Status.Phase != v1alpha1.QueueUnitPhaseRunning || x.Status.RequeueState == nil {
					return false
				}
				x.Status.RequeueState = nil
				return true
			})
		}
		if budget := admissioncheck.Budget(u); g.MaximumExecutionTime && budget > 0 {
			used := admissioncheck.ExecutionUsed(u, now)
			if used >= budget {
				s.evict(u, v1alpha1.ReasonMaximumExecutionTimeExceeded,
					fmt.Sprintf("Execution budget of %s used up", budget))
				return 0
			}
			return budget - used
		}
	}
	return 0
}

func (s *Scheduler) checksOf(u *v1alpha1.QueueUnit) map[string]admissioncheck.Check {
	out := map[string]admissioncheck.Check{}
	for _, st := range u.Status.AdmissionChecks {
		ac := &v1alpha1.AdmissionCheck{}
		if err := s.client.Get(context.Background(), client.ObjectKey{Name: st.Name}, ac); err != nil {
			continue
		}
		out[st.Name] = admissioncheck.Check{Exists: true, RetryDelay: time.Duration(ptr.Deref(ac.Spec.RetryDelayMinutes, 0)) * time.Minute}
	}
	return out
}

func (s *Scheduler) backoffFor(u *v1alpha1.QueueUnit) (time.Duration, int32) {
	if !s.opts.Gates.QueueUnitRequeueState {
		return admissioncheck.BackoffBase, 0
	}
	n := int32(1)
	if u.Status.RequeueState != nil && u.Status.RequeueState.Count != nil {
		n = *u.Status.RequeueState.Count + 1
	}
	return admissioncheck.BackoffFor(n, admissioncheck.RandomJitter()), n
}

func (s *Scheduler) reconcileReserved(ctx context.Context, u *v1alpha1.QueueUnit, now time.Time) time.Duration {
	backoff, count := s.backoffFor(u)
	d := admissioncheck.Decide(u, s.checksOf(u), now, s.opts.Config.AdmissionCheckTimeout.Duration, backoff)
	switch d.Action {
	case admissioncheck.Admit:
		for _, c := range u.Status.AdmissionChecks {
			s.opts.Metrics.AdmissionCheck(c.Name, string(v1alpha1.CheckStateReady))
		}
		s.writeStatus(u, func(x *v1alpha1.QueueUnit) bool {
			if x.Status.Phase != v1alpha1.QueueUnitPhaseReserved || admissioncheck.Decide(x, s.checksOf(x), now, 0, 0).Action != admissioncheck.Admit {
				return false
			}
			t := metav1.NewTime(now)
			x.Status.Phase = v1alpha1.QueueUnitPhaseDequeued
			x.Status.Message = ""
			x.Status.LastUpdateTime = &t
			setCondition(x, v1alpha1.ConditionAdmitted, metav1.ConditionTrue, "Admitted", "Every admission check is Ready", t)
			return true
		})
		return 0
	case admissioncheck.Backoff:
		outcome := map[string]string{admissioncheck.ReasonCheckRetry: "Retry", admissioncheck.ReasonCheckRejected: "Rejected", admissioncheck.ReasonCheckTimeout: "Timeout"}[d.Reason]
		for _, c := range u.Status.AdmissionChecks {
			if c.State != v1alpha1.CheckStateReady {
				s.opts.Metrics.AdmissionCheck(c.Name, outcome)
			}
		}
		if s.leading.Load() {
			s.recorder.Event(u, corev1.EventTypeWarning, d.Reason, d.Message+"; the reservation is released until "+d.RequeueAt.UTC().Format(time.RFC3339))
		}
		s.writeStatus(u, func(x *v1alpha1.QueueUnit) bool {
			if x.Status.Phase != v1alpha1.QueueUnitPhaseReserved {
				return false
			}
			t := metav1.NewTime(now)
			x.Status.Phase = v1alpha1.QueueUnitPhaseTimeoutBackoff
			x.Status.Message = d.Message
			x.Status.Admissions = nil
			x.Status.LastUpdateTime = &t
			rs := &v1alpha1.RequeueState{RequeueAt: &metav1.Time{Time: d.RequeueAt}}
			if count > 0 {
				rs.Count = ptr.To(count)
			}
			x.Status.RequeueState = rs
			setCondition(x, v1alpha1.ConditionQuotaReserved, metav1.ConditionFalse, d.Reason, d.Message, t)
			setCondition(x, v1alpha1.ConditionAdmitted, metav1.ConditionFalse, d.Reason, d.Message, t)
			return true
		})
		return 0
	}
	if len(d.Missing) > 0 {
		s.mu.Lock()
		st := s.units[keyOf(u)]
		report := st != nil && st.reason != "checknotfound"
		if report {
			st.reason = "checknotfound"
		}
		s.mu.Unlock()
		if report && s.leading.Load() {
			s.recorder.Event(u, corev1.EventTypeWarning, "AdmissionCheckNotFound", d.Message)
		}
	}
	if u.Status.Message != d.Message && s.leading.Load() {
		msg := d.Message
		// Only informs: it yields to decisions and is replaced by any later write.
		s.writer.enqueue(keyOf(u), &write{base: u, retryOnConflict: true, info: true, mutate: func(x *v1alpha1.QueueUnit) bool {
			if x.Status.Phase != v1alpha1.QueueUnitPhaseReserved || x.Status.Message == msg {
				return false
			}
			x.Status.Message = msg
			return true
		}}, 0)
	}
	return d.RequeueAfter
}

func (s *Scheduler) reconcileBackoff(u *v1alpha1.QueueUnit, now time.Time) time.Duration {
	if rs := u.Status.RequeueState; rs != nil && rs.RequeueAt != nil && now.Before(rs.RequeueAt.Time) {
		return rs.RequeueAt.Sub(now)
	}
	s.writeStatus(u, func(x *v1alpha1.QueueUnit) bool {
		if !admissioncheck.OwnBackoff(x) {
			return false
		}
		t := metav1.NewTime(now)
		x.Status.Phase = v1alpha1.QueueUnitPhaseEnqueued
		x.Status.AdmissionChecks = nil
		x.Status.Message = "back in queue after the admission check backoff"
		x.Status.LastUpdateTime = &t
		return true
	})
	return 0
}

// writeStatus queues a status change made only if mutate still wants it on
// the freshest object.
func (s *Scheduler) writeStatus(u *v1alpha1.QueueUnit, mutate func(*v1alpha1.QueueUnit) bool) {
	if !s.leading.Load() {
		return
	}
	s.writer.enqueue(keyOf(u), &write{base: u, retryOnConflict: true, mutate: mutate}, 0)
}

// bankExecutionTime adds the current run to the unit's banked execution time.
func bankExecutionTime(x *v1alpha1.QueueUnit, now time.Time) {
	if x.Status.Phase != v1alpha1.QueueUnitPhaseRunning || admissioncheck.RunningSince(x) == nil {
		return
	}
	used := admissioncheck.ExecutionUsed(x, now)
	x.Status.AccumulatedPastExecutionTimeSeconds = ptr.To(int32(used / time.Second))
}

// budgetUsedUp reports whether a unit may not run again: its execution
// budget is spent (feature gate MaximumExecutionTime).
func (s *Scheduler) budgetUsedUp(u *v1alpha1.QueueUnit) bool {
	b := admissioncheck.Budget(u)
	return s.opts.Gates.MaximumExecutionTime && b > 0 && admissioncheck.ExecutionUsed(u, s.clock.Now()) >= b
}
