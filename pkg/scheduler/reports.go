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
	"time"

	corev1 "k8s.io/api/core/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/metrics"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
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

// reporter is the status writer's only client: it turns what the other
// parts decide (a first phase, why a unit waits, an eviction, a lifecycle
// move) into writes, and owns what the scheduler knows each unit's status
// says of its wait (unitState.report). Nothing is written on a follower.
type reporter struct {
	*env
	cache  *unitCache
	writer *statusWriter
}

// waitReport is what the reporter knows of one unit's wait. It lives in the
// unit's state, under the cache's lock, and only the reporter's methods and
// those below change it.
type waitReport struct {
	// reason is the waiting reason last reported (status and event), and
	// wanted its failure; shown is the reason whose report the API carries,
	// with its message, as far as the scheduler knows.
	reason       schedtypes.Reason
	wanted       *schedtypes.Failure
	shown        schedtypes.Reason
	shownMessage string
	// checkMissingTold is true once a missing admission check of the
	// unit's reservation was told (checkMissing).
	checkMissingTold bool
}

// says reports whether r is the reason last reported.
func (w *waitReport) says(r schedtypes.Reason) bool { return w.reason == r }

// admitted forgets the wait of a unit just admitted (the cache's
// admissionDone): whatever it waits for next is reported anew.
func (w *waitReport) admitted() {
	w.reason, w.wanted, w.checkMissingTold = schedtypes.Reason{}, nil, false
}

var _ unitFollower = (*reporter)(nil)

// unitChanged records the events of a change: a new quota label ignored
// while the unit holds another quota, and a unit's quota given back.
func (r *reporter) unitChanged(ch unitChange) {
	if !r.leader() {
		return
	}
	if ch.relabelled != "" {
		r.recorder.Eventf(ch.new, corev1.EventTypeWarning, "QuotaChangeIgnored",
			"the unit stays charged to quota %s while it holds quota; quota %s applies when it is queued again", ch.quota, ch.relabelled)
	}
	if ch.released() {
		r.recorder.Eventf(ch.new, corev1.EventTypeNormal, "Reclaimed", "Resources released; the unit is back in queue %s", ch.queue)
	}
}

// markEnqueued gives a new unit its first phase. The write waits a moment: a
// unit admitted at once is written once, as Dequeued.
func (r *reporter) markEnqueued(u *schedv1alpha1.QueueUnit) {
	if !r.leader() {
		return
	}
	// Any write already waiting gives the unit a phase too; replacing it
	// would lose it (a report of why the unit waits, queued by a pass that
	// ran while the unit was being put in its queue).
	r.writer.enqueueUnlessPending(keyOf(u), &write{
		base: u, retryOnConflict: true, info: true,
		mutate: func(x *schedv1alpha1.QueueUnit) bool {
			return queueunit.MarkEnqueued(x, r.now())
		},
	}, enqueueWriteDelay)
}

// reportWaiting writes why a unit waits (status.message and a
// QuotaReserved=False condition) and records a FailedScheduling (or
// QueueNotFound) event for a refusal, only when the reason changed. A reason
// that comes back before the report of the one in between was written costs
// nothing: that report is dropped. It reports whether the reason changed.
func (r *reporter) reportWaiting(u *schedv1alpha1.QueueUnit, f *schedtypes.Failure) bool {
	return r.reportWaitingOf(keyOf(u), nil, f)
}

// reportWaitingOf is reportWaiting of the unit of key, whose cache state
// is st when the caller has it at hand (nil: looked up by key).
func (r *reporter) reportWaitingOf(key schedtypes.UnitKey, st *unitState, f *schedtypes.Failure) bool {
	if f.Stale || !r.leader() {
		return false
	}
	var base *schedv1alpha1.QueueUnit
	var shown, told bool
	r.cache.updateOf(key, st, func(st *unitState) {
		w := &st.report
		if st.inflight || w.reason == f.Reason {
			return
		}
		w.reason, w.wanted, w.checkMissingTold = f.Reason, f, false
		base = st.obj
		shown = w.shown == f.Reason && base.Status.Message == w.shownMessage
		told = w.shown != schedtypes.Reason{} && base.Status.Message == w.shownMessage
	})
	if base == nil {
		return false
	}
	if shown {
		r.writer.dropInfo(key)
		return true
	}
	delay := waitingWriteDelay
	if f.HeldBack && told {
		delay = heldBackRewriteDelay
	}
	r.writeWaiting(key, base, f, delay)
	return true
}

// queueNotFound reports that u's queue is missing, and counts a
// queue_not_found attempt each time the unit starts waiting for it.
// A unit of one of Koordinator's own quotas, which get no Queue, is told
// that instead: no Queue will come.
func (r *reporter) queueNotFound(u *schedv1alpha1.QueueUnit, name schedtypes.QueueName) {
	f := &schedtypes.Failure{Reason: schedtypes.Reason{Kind: schedtypes.WaitQueueNotFound},
		Message: "queue " + string(name) + " not found: the unit is admitted as soon as it exists"}
	if q := schedtypes.QuotaName(name); quota.IsSystem(q) {
		s := &quota.Shortage{Quota: q, System: true}
		f = &schedtypes.Failure{Reason: s.Reason(), Message: s.Message(), NeverFits: true}
	}
	if r.reportWaiting(u, f) {
		r.opts.Metrics.Attempt(string(name), metrics.ResultQueueNotFound)
	}
}

// writeWaiting queues the report of f after delay: a unit admitted
// meanwhile, or told something else, costs no write.
func (r *reporter) writeWaiting(key schedtypes.UnitKey, base *schedv1alpha1.QueueUnit, f *schedtypes.Failure, delay time.Duration) {
	r.writer.enqueue(key, r.waitingWrite(key, base, f), delay)
}

// waitingWrite is the write that reports f.
func (r *reporter) waitingWrite(key schedtypes.UnitKey, base *schedv1alpha1.QueueUnit, f *schedtypes.Failure) *write {
	message, reason := f.Message, f.Reason.Condition()
	var event string
	switch {
	case f.Reason.Kind == schedtypes.WaitQueueNotFound:
		event = "QueueNotFound"
	case !f.HeldBack:
		// Held-back units were not tried: no attempt, no event.
		event = "FailedScheduling"
	}
	return &write{
		base: base, retryOnConflict: true, info: true,
		written: func(x *schedv1alpha1.QueueUnit) {
			if event != "" {
				r.recorder.Event(x, corev1.EventTypeWarning, event, message)
			}
			r.shown(key, f)
		},
		mutate: func(x *schedv1alpha1.QueueUnit) bool {
			if !queueunit.IsPending(x.Status.Phase) || !queueunit.SetWaiting(x, reason, message, r.now()) {
				return false
			}
			if !f.HeldBack {
				x.Status.Attempts++
			}
			return true
		},
	}
}

// shown records that the API carries f's report; if the unit waits for
// something else by now (its report came while this one was being
// written), that is reported in turn.
func (r *reporter) shown(key schedtypes.UnitKey, f *schedtypes.Failure) {
	var wanted *schedtypes.Failure
	var base *schedv1alpha1.QueueUnit
	r.cache.update(key, func(st *unitState) {
		st.report.shown, st.report.shownMessage = f.Reason, f.Message
		wanted, base = st.report.wanted, st.obj
	})
	if wanted != nil && wanted.Reason != f.Reason {
		// A write already waiting is newer than what was read here.
		r.writer.enqueueUnlessPending(key, r.waitingWrite(key, base, wanted), waitingWriteDelay)
	}
}

// checkMissing tells, once per reservation, that an admission check u's
// queue requires does not exist: an event, and whatever wait is reported
// next is written anew.
func (r *reporter) checkMissing(u *schedv1alpha1.QueueUnit, message string) {
	first := false
	r.cache.update(keyOf(u), func(st *unitState) {
		if w := &st.report; !w.checkMissingTold {
			w.checkMissingTold, w.reason, first = true, schedtypes.Reason{}, true
		}
	})
	if first && r.leader() {
		r.recorder.Event(u, corev1.EventTypeWarning, "AdmissionCheckNotFound", message)
	}
}

// evict asks a unit to give its quota back: condition Evicted and the
// reclaim state of its admissions. The job extension suspends the job and
// returns the unit to Enqueued (docs/protocol.md).
func (r *reporter) evict(u *schedv1alpha1.QueueUnit, reason, message string) {
	if !r.leader() {
		return
	}
	r.writer.enqueue(keyOf(u), &write{
		base: u, retryOnConflict: true,
		written: func(x *schedv1alpha1.QueueUnit) { r.recorder.Event(x, corev1.EventTypeWarning, reason, message) },
		mutate: func(x *schedv1alpha1.QueueUnit) bool {
			now := r.now()
			if !queueunit.MarkEvicted(x, reason, message, now) {
				return false
			}
			if r.opts.Gates.MaximumExecutionTime {
				queueunit.BankExecutionTime(x, now.Time)
			}
			return true
		},
	}, 0)
}

// writeStatus queues a decision made only if mutate still wants it on the
// freshest object; written (may be nil) runs once it is in the API, so an
// event about it is recorded once per move, however often it was decided.
func (r *reporter) writeStatus(u *schedv1alpha1.QueueUnit, mutate func(*schedv1alpha1.QueueUnit) bool, written func(*schedv1alpha1.QueueUnit)) {
	if !r.leader() {
		return
	}
	r.writer.enqueue(keyOf(u), &write{base: u, retryOnConflict: true, mutate: mutate, written: written}, 0)
}

// inform queues a write that only informs: it yields to decisions and is
// replaced by any later write.
func (r *reporter) inform(u *schedv1alpha1.QueueUnit, mutate func(*schedv1alpha1.QueueUnit) bool) {
	if !r.leader() {
		return
	}
	r.writer.enqueue(keyOf(u), &write{base: u, retryOnConflict: true, info: true, mutate: mutate}, 0)
}
