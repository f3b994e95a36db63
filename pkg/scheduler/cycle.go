package scheduler

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/admissioncheck"
	"github.com/koordinator-sh/koord-queue/pkg/metrics"
	"github.com/koordinator-sh/koord-queue/pkg/queue"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
)

// enqueueWriteDelay holds back a new unit's first Enqueued write, so that a
// unit admitted in the next pass costs one write, not two; waitingWriteDelay
// does the same for the report of why a unit waits. A unit that already says
// why it waits and is held back for a moment (behind a preemptor, say) waits
// longer, heldBackRewriteDelay: a hold that ends before costs no write.
const (
	enqueueWriteDelay    = 500 * time.Millisecond
	waitingWriteDelay    = time.Second
	heldBackRewriteDelay = 5 * time.Second
)

func (s *Scheduler) now() metav1.Time { return metav1.NewTime(s.clock.Now()) }

// schedule runs one pass and hands its results to the writer.
func (s *Scheduler) schedule(ctx context.Context) {
	start := s.clock.Now()
	memo := shortfalls{}
	res := s.queues.Pass(func(u *queue.Unit, q queue.Settings) *queue.Failure {
		f := s.try(ctx, u, q, memo)
		if f != nil && q.MaxWait > 0 && !u.WaitingSince.IsZero() {
			// The end of its bound is a deadline: look again then.
			if at := u.WaitingSince.Add(q.MaxWait); at.After(start) {
				s.wakeups.wakeAt(u.Cohort, at)
			}
		}
		return f
	})
	s.opts.Metrics.Pass(s.clock.Since(start))
	for _, a := range res.Admitted {
		s.admit(ctx, a)
	}
	for _, f := range res.Failed {
		if f.Failure.Reason == reasonStale {
			continue
		}
		// Held-back units were not tried, but say what they wait for: their
		// texts name what stays put while others are admitted, and
		// reportWaiting writes only when the reason changes.
		if !f.Failure.HeldBack {
			result := metrics.ResultUnschedulable
			if f.Failure.NeverFits {
				result = metrics.ResultNeverFits
			}
			s.opts.Metrics.Attempt(f.Queue, result)
		}
		if st, ok := f.Unit.Object.(*unitState); ok && st != nil {
			s.mu.Lock()
			if f.Failure.HeldBack {
				// A preemptor held back behind another unit is not tried, so
				// its nomination would never end, and the units of its
				// cohort paused for it (borrowingPaused) would wait forever:
				// it ends here; the preemptor is nominated again when tried.
				s.unnominate(f.Unit.Key)
			}
			obj := st.obj
			failure := f.Failure
			if failure.Inferred && st.reason != failure.Reason {
				// About to be reported: say this unit's own numbers.
				failure = s.refine(ctx, st, f.Unit, failure)
			}
			s.mu.Unlock()
			s.reportWaiting(obj, failure)
		}
	}
	if len(res.Admitted) > 0 || len(res.Failed) > 0 {
		klog.FromContext(ctx).V(4).Info("Pass", "admitted", len(res.Admitted), "failed", len(res.Failed), "examined", res.Examined)
	}
}

// try decides one unit; it runs inside a pass, under the queue manager's lock.
// memo holds the pass's refusals (see shortfalls).
func (s *Scheduler) try(ctx context.Context, u *queue.Unit, q queue.Settings, memo shortfalls) *queue.Failure {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, _ := u.Object.(*unitState)
	if st == nil || st.deleted || st.inflight || !queueunit.IsPending(st.obj.Status.Phase) || st.obj.DeletionTimestamp != nil {
		return &queue.Failure{Reason: reasonStale, HeldBack: true}
	}
	if f := s.nodeMisfit(st); f != nil {
		return f
	}
	if sf, ok := memo.match(u.Quota, q.Name, u.Request, u.Priority); ok {
		if _, nominated := s.nominated.byUnit[u.Key]; !nominated {
			u.Cohort = sf.cohort
			f := sf.failure
			f.Inferred = true
			return &f
		}
	}
	u.Cohort = s.fw.Cohort(u.Quota)
	info := st.info(u)
	if f := s.borrowingPaused(info, u.Cohort); f != nil {
		// WouldBorrow is monotone in the request too.
		f.Covering = true
		memo.add(u.Quota, q.Name, u.Cohort, u.Key, u.Request, u.Priority, f)
		return f
	}
	if status := s.fw.Filter(ctx, info); !status.IsSuccess() {
		var v quota.Victims
		if status.Code == framework.Unschedulable {
			var f *queue.Failure
			if f, v = s.preempt(ctx, info, u.Cohort, q.Preempt); f != nil {
				return f
			}
		}
		s.unnominate(u.Key)
		f := failureOf(status)
		if !v.RetryAt.IsZero() {
			f.Reason, f.Message = protectedReason(f.Reason, v), protectedMessage(f.Message, v)
		}
		if !f.NeverFits {
			f.Covering = true
			memo.add(u.Quota, q.Name, u.Cohort, u.Key, u.Request, u.Priority, f)
		}
		return f
	}
	if status := s.fw.Reserve(ctx, info); !status.IsSuccess() {
		return failureOf(status)
	}
	st.inflight = true
	s.unnominate(u.Key)
	return nil
}

// info is what plugins see of pending unit u.
func (st *unitState) info(u *queue.Unit) *framework.UnitInfo {
	return &framework.UnitInfo{Key: u.Key, Unit: st.obj, Queue: st.queue, Quota: u.Quota, Request: u.Request, Priority: u.Priority}
}

// unnominate ends unit key's nomination, if any; units of its cohort paused
// for it are worth trying again. It runs under s.mu.
func (s *Scheduler) unnominate(key string) {
	if cohort := s.nominated.remove(key); cohort != "" {
		s.queues.Freed(cohort)
	}
}

// refine replaces an inferred failure by the unit's own, for its report. It
// runs under s.mu.
func (s *Scheduler) refine(ctx context.Context, st *unitState, u *queue.Unit, f *queue.Failure) *queue.Failure {
	info := st.info(u)
	status := s.fw.Filter(ctx, info)
	if status.IsSuccess() || status.Reason != f.Reason {
		// Usage moved since the pass; the next pass tells the unit again.
		return f
	}
	own := *f
	own.Message, own.Inferred = status.Message, false
	return &own
}

// borrowingPaused holds back a unit that would borrow above its min while
// room is being made for a nominated unit of the same cohort.
func (s *Scheduler) borrowingPaused(info *framework.UnitInfo, cohort string) *queue.Failure {
	key := s.nominated.other(cohort, info.Key)
	if key == "" || !s.fw.WouldBorrow(info) {
		return nil
	}
	// Tried again only once the cohort changes: room freed or a nomination
	// ended (unnominate). The reason names the preemptor, so its text is true.
	return &queue.Failure{Reason: "borrowing-paused/" + key, HeldBack: true, UntilCohortChanges: true,
		Message: borrowingPausedMessage(info.Quota, key)}
}

func failureOf(s *framework.Status) *queue.Failure {
	return &queue.Failure{Reason: s.Reason, Message: s.Message, NeverFits: s.Code == framework.UnschedulableAndUnresolvable}
}

// admit writes an admission decided in a pass.
func (s *Scheduler) admit(ctx context.Context, a queue.Admitted) {
	key := a.Unit.Key
	s.mu.Lock()
	st := s.units[key]
	if st == nil {
		s.mu.Unlock()
		return
	}
	base := st.obj
	info := &framework.UnitInfo{Key: key, Unit: base, Queue: a.Queue, Quota: a.Unit.Quota, Request: a.Unit.Request, Priority: a.Unit.Priority}
	s.mu.Unlock()

	admissions := admissionsFor(base)
	checks := s.checksFor(base, a.Queue)
	s.writer.enqueue(key, &write{
		base: base,
		mutate: func(x *v1alpha1.QueueUnit) bool {
			now := s.now()
			x.Status.Phase = v1alpha1.QueueUnitPhaseDequeued
			x.Status.AdmissionChecks = nil
			x.Status.RequeueState = keepCount(x.Status.RequeueState)
			x.Status.Admissions = admissions
			x.Status.LastAllocateTime = &now
			x.Status.LastUpdateTime = &now
			x.Status.Quota = a.Unit.Quota
			x.Status.Message = ""
			x.Status.Attempts++
			x.Status.ReclaimablePods = nil
			setCondition(x, v1alpha1.ConditionQuotaReserved, metav1.ConditionTrue, "QuotaReserved", "Quota reserved in "+a.Unit.Quota, now)
			setCondition(x, v1alpha1.ConditionAdmitted, metav1.ConditionTrue, "Admitted", "Admitted by queue "+a.Queue, now)
			if len(checks) > 0 {
				// Quota is held; the checks decide when the job may start.
				x.Status.Phase = v1alpha1.QueueUnitPhaseReserved
				for _, name := range checks {
					x.Status.AdmissionChecks = append(x.Status.AdmissionChecks, v1alpha1.AdmissionCheckState{
						Name: name, State: v1alpha1.CheckStatePending, LastTransitionTime: now})
				}
				x.Status.Message = "waiting for admission checks " + strings.Join(checks, ", ")
				setCondition(x, v1alpha1.ConditionAdmitted, metav1.ConditionFalse, "AdmissionChecksPending", x.Status.Message, now)
			}
			if meta.FindStatusCondition(x.Status.Conditions, v1alpha1.ConditionEvicted) != nil {
				setCondition(x, v1alpha1.ConditionEvicted, metav1.ConditionFalse, "Admitted", "Admitted again", now)
			}
			return true
		},
		done: func(written *v1alpha1.QueueUnit, err error) { s.admitted(ctx, info, written, err) },
	}, 0)
}

// admitted learns how an admission write ended.
func (s *Scheduler) admitted(ctx context.Context, info *framework.UnitInfo, written *v1alpha1.QueueUnit, err error) {
	key := info.Key
	s.mu.Lock()
	st := s.units[key]
	if st != nil {
		st.inflight = false
	}
	if err == nil && written != nil && st != nil {
		if queueunit.IsPending(st.obj.Status.Phase) {
			// The informer has not brought our write yet.
			st.obj = written
		}
		st.holding, st.reason, st.wanted = true, "", nil
		latest := st.obj
		s.mu.Unlock()
		note := ""
		if !s.opts.NodeFitCheck {
			note = "; node fit check skipped (--node-fit-check=false)"
		}
		s.recorder.Eventf(written, corev1.EventTypeNormal, "Scheduled", "Admitted by queue %s; quota %s charged %s%s", info.Queue, info.Quota, info.Request, note)
		s.opts.Metrics.Attempt(info.Queue, metrics.ResultAdmitted)
		s.opts.Metrics.Admitted(info.Queue, s.clock.Since(written.CreationTimestamp.Time))
		s.opts.Metrics.Coming(written.Namespace, jobType(written), metrics.StatusAdmitted)
		// Replay what arrived while the write was in flight (usage, pods running).
		s.onUnit(latest)
		return
	}
	// The write did not happen: give the quota back and decide again.
	s.fw.Unreserve(ctx, info)
	var retry *v1alpha1.QueueUnit
	retryState := st
	if st != nil {
		s.fw.SetUsage(key, st.holdingFor(key, s.ceilings[st.queue]))
		if queueunit.IsPending(st.obj.Status.Phase) {
			retry = st.obj
		}
	}
	s.mu.Unlock()
	s.queues.PodsRunning(key)
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Admission not written; deciding again", "unit", key, "err", err)
	}
	if retry != nil {
		queueName, quotaName := s.fw.Map(retry)
		s.enqueue(retry, retryState, queueName, quotaName, true)
	}
}

func setCondition(u *v1alpha1.QueueUnit, t string, status metav1.ConditionStatus, reason, message string, now metav1.Time) {
	meta.SetStatusCondition(&u.Status.Conditions, metav1.Condition{
		Type: t, Status: status, Reason: reason, Message: message, LastTransitionTime: now, ObservedGeneration: u.Generation,
	})
}

func jobType(u *v1alpha1.QueueUnit) string {
	if u.Spec.ConsumerRef == nil {
		return ""
	}
	return u.Spec.ConsumerRef.Kind
}

// checksFor lists the admission checks the unit's queue requires of it.
func (s *Scheduler) checksFor(u *v1alpha1.QueueUnit, queueName string) []string {
	s.mu.Lock()
	q := s.queueObjs[queueName]
	s.mu.Unlock()
	if q == nil || len(q.Spec.AdmissionChecks) == 0 {
		return nil
	}
	names, err := admissioncheck.Matching(q.Spec.AdmissionChecks, u.Labels)
	if err != nil {
		// The API validates selectors; a bad one holds the check for everyone.
		names = nil
		for _, c := range q.Spec.AdmissionChecks {
			names = append(names, c.Name)
		}
	}
	return names
}

// keepCount keeps the requeue count across an admission (it is cleared once
// the unit runs) and drops the time.
func keepCount(rs *v1alpha1.RequeueState) *v1alpha1.RequeueState {
	if rs == nil || rs.Count == nil {
		return nil
	}
	return &v1alpha1.RequeueState{Count: rs.Count}
}
