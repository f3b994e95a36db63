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
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/admissioncheck"
	"github.com/koordinator-sh/koord-queue/pkg/metrics"
	"github.com/koordinator-sh/koord-queue/pkg/queue"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
)

// passDriver runs the passes: it asks the queue manager for a pass, decides
// each unit it is given (try) under the cache's lock, and hands admissions
// to the status writer and refusals to the reporter.
type passDriver struct {
	*env
	cache     *unitCache
	registry  *queueRegistry
	preemptor *preemptor
	reports   *reporter
	intake    *intake
	writer    *statusWriter
	wakeups   *wakeups
	nodes     *nodes

	// inflight counts the admissions handed to the writer whose outcome is
	// not known yet (see Options.AdmissionWindow).
	inflight atomic.Int64
}

// budget is how many units the next pass may admit: 0 for no bound, -1
// when the admission window is full (the pass waits for a write to land).
func (p *passDriver) budget() int {
	w := p.opts.AdmissionWindow
	if w <= 0 {
		return 0
	}
	if free := w - int(p.inflight.Load()); free > 0 {
		return free
	}
	return -1
}

// schedule runs one pass and hands its results to the writer.
func (p *passDriver) schedule(ctx context.Context) {
	limit := p.budget()
	if limit < 0 {
		// The window is full: the write that lands first asks for a pass.
		return
	}
	start := p.clock.Now()
	memo := shortfalls{}
	res := p.queues.PassUpTo(func(u *schedtypes.Unit, q queue.Settings) *schedtypes.Failure {
		f := p.try(ctx, u, q, memo)
		if f != nil && q.MaxWait > 0 && !u.WaitingSince.IsZero() {
			// The end of its bound is a deadline: look again then.
			if at := u.WaitingSince.Add(q.MaxWait); at.After(start) {
				p.wakeups.wakeAt(u.Cohort, at)
			}
		}
		return f
	}, limit)
	p.opts.Metrics.Pass(p.clock.Since(start))
	for _, a := range res.Admitted {
		p.admit(ctx, a)
	}
	for _, f := range res.Failed {
		if f.Failure.Stale {
			continue
		}
		// Held-back units were not tried, but say what they wait for: their
		// texts name what stays put while others are admitted, and
		// reportWaiting writes only when the reason changes.
		if f.Failure.Confirmed && !f.Changed {
			// Refused as last time: it was told why then.
			p.opts.Metrics.Attempt(string(f.Queue), metrics.ResultUnschedulable)
			continue
		}
		if !f.Failure.HeldBack {
			result := metrics.ResultUnschedulable
			if f.Failure.NeverFits {
				result = metrics.ResultNeverFits
			}
			p.opts.Metrics.Attempt(string(f.Queue), result)
		}
		if st, _ := f.Unit.Object.(*unitState); st != nil {
			if f.Failure.HeldBack {
				// A preemptor held back behind another unit is not tried, so
				// its nomination would never end, and the units of its
				// cohort paused for it (borrowingPaused) would wait forever:
				// it ends here; the preemptor is nominated again when tried.
				p.preemptor.unnominate(f.Unit.Key)
			}
			p.reports.reportWaitingOf(f.Unit.Key, st, p.explain(ctx, f.Unit, f.Failure))
		}
	}
	if len(res.Admitted) > 0 || len(res.Failed) > 0 {
		klog.FromContext(ctx).V(4).Info("Pass", "admitted", len(res.Admitted), "failed", len(res.Failed), "examined", res.Examined)
	}
}

// try decides one unit; it runs inside a pass, under the queue manager's
// lock, and decides under the cache's. memo holds the pass's refusals (see
// shortfalls).
func (p *passDriver) try(ctx context.Context, u *schedtypes.Unit, q queue.Settings, memo shortfalls) *schedtypes.Failure {
	return p.cache.decide(u.Object, func(st *unitState) *schedtypes.Failure {
		if f := p.nodes.misfit(st); f != nil {
			return f
		}
		if sf, ok := memo.match(u.Quota, q.Name, u.Request, u.Priority); ok && !p.preemptor.isNominated(u.Key) {
			u.Cohort = sf.cohort
			f := sf.failure
			f.Inferred = true
			return &f
		}
		u.Cohort = p.fw.Cohort(u.Quota)
		info := st.info(u)
		info.Beside = u.Pending.Beside
		if pf := u.Pending.Failure; pf != nil && pf.Recheck != nil && !pf.Inferred && pf.Recheck.Preempt == q.Preempt &&
			!p.preemptor.isNominated(u.Key) {
			if mark := p.fw.StillRefused(info, pf.Recheck, pf.Reason, p.reclaims()); mark != nil {
				// Refused as before, and nothing its refusal depended on
				// changed: no filter, no victim search, nothing new to report.
				f := *pf
				f.Confirmed, f.Recheck = true, mark
				// Later units of its queue asking no less are refused too.
				memo.add(u.Quota, q.Name, u.Cohort, u.Key, u.Request, u.Priority, &f)
				return &f
			}
		}
		if f := p.preemptor.borrowingPaused(info, u.Cohort); f != nil {
			// WouldBorrow is monotone in the request too.
			f.Covering = true
			memo.add(u.Quota, q.Name, u.Cohort, u.Key, u.Request, u.Priority, f)
			return f
		}
		if status := p.fw.Filter(ctx, info); !status.IsSuccess() {
			if f := heldFailure(status); f != nil {
				memo.add(u.Quota, q.Name, u.Cohort, u.Key, u.Request, u.Priority, f)
				return f
			}
			var v schedtypes.Victims
			if status.Code == framework.Unschedulable {
				var f *schedtypes.Failure
				if f, v = p.preemptor.preempt(ctx, info, u.Cohort, q.Preempt); f != nil {
					// Room is being made for it: it may hold that room.
					f.Reserves = true
					return f
				}
			}
			p.preemptor.unnominate(u.Key)
			f := failureOf(status)
			if !v.RetryAt.IsZero() {
				f.Reason, f.Message = protectedReason(f.Reason, v), protectedMessage(f.Message, v)
			}
			if !f.NeverFits {
				f.Covering, f.Reserves = true, v.Reachable
				if f.Reason.Kind == schedtypes.WaitInsufficientQuota && v.RetryAt.IsZero() && !v.Partial {
					f.Recheck = p.fw.RefusalMark(info, q.Preempt, p.reclaims())
				}
				memo.add(u.Quota, q.Name, u.Cohort, u.Key, u.Request, u.Priority, f)
			}
			return f
		}
		if status := p.fw.Reserve(ctx, info); !status.IsSuccess() {
			return failureOf(status)
		}
		// Admitted: decide assumes it, charged now and written later.
		p.preemptor.unnominate(u.Key)
		return nil
	})
}

// reclaims reports whether units may reclaim what other quotas borrow.
func (p *passDriver) reclaims() bool {
	return ptr.Deref(p.opts.Config.EnableReclaim, true)
}

// info is what plugins see of pending unit u.
func (st *unitState) info(u *schedtypes.Unit) *framework.UnitInfo {
	return &framework.UnitInfo{Key: u.Key, Unit: st.obj, Queue: st.queue, Quota: u.Quota, Request: u.Request, Priority: u.Priority}
}

// explain is what a refused unit is told: an inferred failure becomes the
// unit's own, with its own numbers, when it is about to be reported. A
// paused borrower's text names only its quota and the preemptor, the same
// for every unit it is inferred for (of one quota), and no filter says it:
// it is told as inferred.
func (p *passDriver) explain(ctx context.Context, u *schedtypes.Unit, f *schedtypes.Failure) (told *schedtypes.Failure) {
	told = f
	p.cache.inspect(u.Object, func(st *unitState) {
		if !f.Inferred || f.Reason.Kind == schedtypes.WaitBorrowingPaused || st.report.says(f.Reason) {
			return
		}
		status := p.fw.Filter(ctx, st.info(u))
		if status.IsSuccess() || status.Reason != f.Reason {
			// Usage moved since the pass; the next pass tells the unit again.
			return
		}
		own := *f
		own.Message, own.Inferred = status.Message, false
		told = &own
	})
	return told
}

func failureOf(s *framework.Status) *schedtypes.Failure {
	return &schedtypes.Failure{Reason: s.Reason, Message: s.Message, NeverFits: s.Code == framework.UnschedulableAndUnresolvable}
}

// admit writes an admission decided in a pass.
func (p *passDriver) admit(ctx context.Context, a queue.Admitted) {
	key := a.Unit.Key
	base, _ := p.cache.object(key)
	if base == nil {
		return
	}
	info := &framework.UnitInfo{Key: key, Unit: base, Queue: a.Queue, Quota: a.Unit.Quota, Request: a.Unit.Request, Priority: a.Unit.Priority}

	admissions := queueunit.AdmissionsFor(base)
	checks := p.checksFor(base, a.Queue)
	// One time for every attempt, so a fresh read can tell whether an
	// attempt whose answer was lost landed (the API keeps seconds).
	now := p.now()
	p.inflight.Add(1)
	p.writer.enqueue(key, &write{
		base:   base,
		landed: func(fresh *schedv1alpha1.QueueUnit) bool { return admissionLanded(fresh, a.Unit.Quota, now) },
		mutate: func(x *schedv1alpha1.QueueUnit) bool {
			queueunit.MarkAdmitted(x, string(a.Unit.Quota), string(a.Queue), admissions, checks, now)
			return true
		},
		done: func(written *schedv1alpha1.QueueUnit, err error) { p.admitted(ctx, info, written, err) },
	}, 0)
}

// admissionLanded reports whether fresh carries the admission to quotaName
// made at now: it holds quota there since then.
func admissionLanded(fresh *schedv1alpha1.QueueUnit, quotaName schedtypes.QuotaName, now metav1.Time) bool {
	t := fresh.Status.LastAllocateTime
	return queueunit.HoldsQuota(fresh.Status.Phase) && schedtypes.QuotaName(fresh.Status.Quota) == quotaName && t != nil && t.Unix() == now.Unix()
}

// admitted learns how an admission write ended.
func (p *passDriver) admitted(ctx context.Context, info *framework.UnitInfo, written *schedv1alpha1.QueueUnit, err error) {
	if w := p.opts.AdmissionWindow; p.inflight.Add(-1) == int64(w)-1 && w > 0 {
		// The window was full: the passes wait for this.
		p.queues.Kick()
	}
	key := info.Key
	ok := err == nil && written != nil
	if !ok {
		// Give the quota back before the cache charges what the object
		// says the unit holds (usually nothing).
		p.fw.Unreserve(ctx, info)
	}
	st, latest, retry := p.cache.admissionDone(key, written, ok)
	if ok && st != nil {
		note := ""
		if !p.opts.NodeFitCheck {
			note = "; node fit check skipped (--node-fit-check=false)"
		}
		p.recorder.Eventf(written, corev1.EventTypeNormal, "Scheduled", "Admitted by queue %s; quota %s charged %s%s", info.Queue, info.Quota, info.Request, note)
		p.opts.Metrics.Attempt(string(info.Queue), metrics.ResultAdmitted)
		p.opts.Metrics.Admitted(string(info.Queue), p.clock.Since(written.CreationTimestamp.Time))
		p.opts.Metrics.Coming(written.Namespace, jobType(written), metrics.StatusAdmitted)
		// Replay what arrived while the write was in flight (usage, pods running).
		p.intake.onUnit(latest)
		return
	}
	// The write did not happen: decide again.
	p.queues.PodsRunning(key)
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Admission not written; deciding again", "unit", key, "err", err)
	}
	if retry == nil {
		return
	}
	if permanent(err) {
		// Deciding again at once would be refused again, in a hot loop: the
		// unit waits out a backoff of its own (the writer told why in an
		// event) while the others move.
		n := p.cache.refused(key)
		// In a goroutine of its own, as with the real clock: a fake clock
		// runs the function while it holds its lock.
		p.clock.AfterFunc(refusalBackoff(n), func() { go p.intake.replay(key) })
		return
	}
	queueName, quotaName := p.fw.Map(retry)
	p.intake.enqueue(retry, st, queueName, quotaName, true)
}

// refusalBackoff is how long a unit whose n-th admission in a row was
// refused waits before it is decided again: 1 s doubling up to 5 minutes.
func refusalBackoff(n int) time.Duration {
	return min(time.Second<<min(n-1, 9), 5*time.Minute)
}

// checksFor lists the admission checks the unit's queue requires of it.
func (p *passDriver) checksFor(u *schedv1alpha1.QueueUnit, queueName schedtypes.QueueName) []string {
	q := p.registry.get(queueName)
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
