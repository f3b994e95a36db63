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

package queue

import (
	"fmt"
	"time"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// Try decides one unit of queue q: nil means it was admitted (the caller has
// charged its quota and owns it from now on); otherwise why it was not.
type Try func(u *schedtypes.Unit, q Settings) *schedtypes.Failure

// Outcome is one unit tried in a pass and not admitted.
type Outcome struct {
	Unit    *schedtypes.Unit
	Queue   schedtypes.QueueName
	Failure *schedtypes.Failure
	// Changed is false when the unit failed for the same reason as before.
	Changed bool
}

// PassResult is what a pass did.
type PassResult struct {
	// Admitted units, in admission order, with their queue.
	Admitted []Admitted
	// Failed units that were tried.
	Failed []Outcome
	// Examined counts units looked at, tried or not.
	Examined int
}

// Admitted is a unit a pass admitted.
type Admitted struct {
	Unit  *schedtypes.Unit
	Queue schedtypes.QueueName
}

// Pass serves every queue once: queues by priority (round-robin among equal
// priorities, taking turns one admission at a time), units in queue order under
// the queue's policy. Admitted units leave the manager.
func (m *Manager) Pass(try Try) PassResult { return m.PassUpTo(try, 0) }

// PassUpTo is Pass that stops once it has admitted limit units (limit <= 0:
// no bound). The queues it did not walk in full stay unsettled, so the next
// pass goes on with them.
func (m *Manager) PassUpTo(try Try, limit int) PassResult {
	m.mu.Lock()
	defer m.mu.Unlock()
	snap := m.epochs.snapshot()
	now := m.now()
	var res PassResult
	var walked []*queueIter
	for _, tier := range m.order.tiers(m.queues) {
		iters := make([]*queueIter, 0, len(tier))
		names := make([]schedtypes.QueueName, 0, len(tier))
		quiet := snap.quiet(tier)
		for i, q := range tier {
			if quiet[i] {
				continue
			}
			iters = append(iters, m.newIter(snap, q, now, limit))
			names = append(names, q.Name)
		}
		// Each queue walked is walked in full by the end of its tier.
		walked = append(walked, iters...)
		m.order.serve(tier, names, func(i int) bool { return iters[i].step(try, &res) })
	}
	for _, it := range walked {
		if !it.skipped {
			it.settle()
		}
	}
	m.freeIters(walked)
	return res
}

// newIter is a walk of q for a pass, made of one a past pass left (a pass
// at 1,000 queues walks many; each walk copies its queue's units).
func (m *Manager) newIter(snap epochSnapshot, q *pendingQueue, now time.Time, limit int) *queueIter {
	var it *queueIter
	if n := len(m.idleIters); n > 0 {
		it, m.idleIters = m.idleIters[n-1], m.idleIters[:n-1]
	} else {
		it = &queueIter{blocked: map[schedtypes.QuotaName]*schedtypes.Unit{}, ahead: map[schedtypes.QuotaName]*schedtypes.Unit{}}
	}
	*it = queueIter{m: m, epochs: snap, q: q, units: append(it.units[:0], q.units...), blocked: it.blocked, ahead: it.ahead, now: now, limit: limit,
		noting: q.MaxWait <= 0 && !q.WaitForPodsRunning, cohorts: it.cohorts[:0], quotas: it.quotas[:0], last: -1}
	return it
}

// freeIters keeps the walks of a pass that ended for the next one, holding
// no unit.
func (m *Manager) freeIters(walked []*queueIter) {
	for _, it := range walked {
		clear(it.units)
		clear(it.blocked)
		clear(it.ahead)
		*it = queueIter{units: it.units[:0], blocked: it.blocked, ahead: it.ahead, cohorts: it.cohorts[:0], quotas: it.quotas[:0]}
		m.idleIters = append(m.idleIters, it)
	}
}

type queueIter struct {
	m      *Manager
	epochs epochSnapshot
	q      *pendingQueue
	units  []*schedtypes.Unit
	pos    int
	// limit is the most units the pass may admit (<= 0: no bound).
	limit int
	// blocked maps a quota to the blocking unit that waits on it; ahead to
	// the last unit of the quota that waits in line behind it (see heldBack).
	blocked  map[schedtypes.QuotaName]*schedtypes.Unit
	ahead    map[schedtypes.QuotaName]*schedtypes.Unit
	examined int
	now      time.Time
	// open is set when try answered a unit with a failure that is worth
	// trying again in every pass: the queue is not settled (see settle.go).
	open bool
	// started is set at the queue's first step; skipped when the queue
	// turned out quiet then, once admissions of the pass took the room
	// that made it worth a walk: it keeps its last walk's settling.
	started, skipped bool
	// noting: the queue may be settled after the walk (settle.go). Each
	// unit the walk leaves waiting is noted as it passes (note), while it
	// is at hand; cohorts, quotas and last are the settling gathered so far.
	noting  bool
	cohorts []settledCohort
	quotas  []schedtypes.QuotaName
	last    int
}

// starving reports whether u has waited longer than its queue's MaxWait.
func (it *queueIter) starving(u *schedtypes.Unit) bool {
	q := it.q
	return q.MaxWait > 0 && !u.WaitingSince.IsZero() && it.now.Sub(u.WaitingSince) >= q.MaxWait
}

// step goes on until it admits one unit (true) or the queue is done for this
// pass (false).
func (it *queueIter) step(try Try, res *PassResult) bool {
	q, m := it.q, it.m
	if !it.started {
		it.started = true
		if it.epochs.stillQuiet(q) {
			it.skipped = true
			return false
		}
	}
	intelligent := q.Policy == schedv1alpha1.QueuePolicyIntelligent
	for ; it.pos < len(it.units); it.pos++ {
		if it.limit > 0 && len(res.Admitted) >= it.limit {
			// The pass has admitted all it may: the rest of the queue waits
			// for the next one.
			it.open = true
			return false
		}
		if q.WaitForPodsRunning && !intelligent && m.starting.waits(q.Name) {
			it.holdForPods(res)
			return false
		}
		if it.depthReached() {
			it.beyondDepth(res)
			return false
		}
		u := it.units[it.pos]
		it.examined++
		res.Examined++
		blocking := q.blocks(u)
		if blocker := it.blocked[u.Quota]; blocker != nil {
			// A unit of higher rank waits on this quota: nobody may jump it.
			it.record(u, it.heldBack(u, blocker), res)
			it.note(u)
			continue
		}
		if !it.epochs.eligible(u, &q.Settings) {
			// Not worth a try: it was refused, and waits (Walk.Waits).
			if w := &u.Pending.Walk; w.Blocking || (it.starving(u) && !w.NeverFits && !w.HeldBack) {
				it.block(u)
			}
			it.note(u)
			continue
		}
		u.Pending.Beside = m.held.beside(u)
		f := try(u, q.Settings)
		it.open = it.open || opens(f)
		if f == nil {
			if c := m.held.drop(u.Key); c != "" {
				// The units refused beside its room wait for something else
				// now (and one within its min may reclaim): try them again.
				m.epochs.moved(c)
				m.signal()
			} else {
				// The room it takes is no longer there for units that wait
				// for room at the cohort's top. (A unit that held room takes
				// what was kept for it: not counted, which can only try
				// others sooner.)
				m.epochs.took(u.Cohort, u.Request)
			}
			it.pos++
			q.remove(u, m.less)
			delete(m.units, u.Key)
			delete(m.unitQueue, u.Key)
			res.Admitted = append(res.Admitted, Admitted{Unit: u, Queue: q.Name})
			m.starting.add(q.Name, u.Key)
			return true
		}
		if !blocking && !f.NeverFits && !f.HeldBack && it.starving(u) {
			// Reserving: later units of its quota may not take its room.
			blocking = true
			f.Reason.Reserving = true
			f.Message += fmt.Sprintf("; reserving: later units of quota %s wait until it is admitted (it has waited longer than %s %s)",
				u.Quota, schedv1alpha1.MaxWaitAnnotation, q.MaxWait)
		}
		f.Blocking = (blocking || f.Preempting) && !f.NeverFits
		m.noteHeld(u, q.Settings, f)
		it.record(u, f, res)
		if f.Blocking {
			it.block(u)
		}
		it.note(u)
		if f.Covering && !f.Blocking && m.priorityMajor && q.allCover(u.Quota, u.Request) {
			// Every later unit would be refused the same way.
			it.pos++
			it.finish(u, f, res)
			return false
		}
	}
	return false
}

// block makes u the blocking unit of its quota for the rest of the pass.
func (it *queueIter) block(u *schedtypes.Unit) {
	it.blocked[u.Quota] = u
	it.ahead[u.Quota] = u
}

// heldBack says why u waits behind blocker, a unit of higher rank that waits
// on the same quota. Each text names a unit that stays the same while
// others are admitted, so one admission rewrites only O(1) messages:
//   - under Block (and inside Intelligent's high band) u names the unit
//     directly ahead of it in its quota, which waits too;
//   - a low-band unit of an Intelligent queue names the last waiting
//     high-band unit of its quota;
//   - otherwise (Priority) the preemptor, or the unit reserving the quota
//     past its max-wait.
func (it *queueIter) heldBack(u, blocker *schedtypes.Unit) *schedtypes.Failure {
	q := it.q
	f := &schedtypes.Failure{HeldBack: true}
	ahead := it.ahead[u.Quota]
	switch {
	case q.blocks(u) && q.blocks(blocker):
		f.Reason, f.Message = schedtypes.Reason{Kind: schedtypes.WaitBehind, Subject: string(ahead.Key)}, BehindMessage(ahead.Namespace, ahead.Name, q.Settings, u.Quota)
		it.ahead[u.Quota] = u
	case q.blocks(blocker):
		f.Reason, f.Message = schedtypes.Reason{Kind: schedtypes.WaitHighBand, Subject: string(ahead.Key)}, HighBandMessage(ahead.Namespace, ahead.Name, ahead.Priority, q.Settings, u.Quota)
	case blocker.Pending.Failure != nil && blocker.Pending.Failure.Preempting:
		f.Reason, f.Message = schedtypes.Reason{Kind: schedtypes.WaitPreemptor, Subject: string(blocker.Key)}, PreemptorMessage(blocker.Namespace, blocker.Name, blocker.Priority, u.Quota)
	default:
		f.Reason, f.Message = schedtypes.Reason{Kind: schedtypes.WaitReserving, Subject: string(blocker.Key)}, ReservingMessage(blocker.Namespace, blocker.Name, q.Settings, u.Quota)
	}
	return f
}

// beyondDepth tells the units past the queue's max-depth that were never
// examined why they wait. Units examined before keep their own reason;
// the walk ends as soon as no unit is left untold.
func (it *queueIter) beyondDepth(res *PassResult) {
	q := it.q
	if q.untried == 0 {
		return
	}
	f := &schedtypes.Failure{Reason: schedtypes.Reason{Kind: schedtypes.WaitBeyondMaxDepth, Subject: string(q.Name)}, HeldBack: true, Message: DepthMessage(q.Settings)}
	for i := it.pos; i < len(it.units) && q.untried > 0; i++ {
		if u := it.units[i]; u.Pending.Failure == nil {
			it.record(u, f, res)
		}
	}
}

// holdForPods tells the units of a queue held by wait-for-pods-running what
// they wait for; only those whose reason changes are recorded.
func (it *queueIter) holdForPods(res *PassResult) {
	// One reason, naming no unit, for the whole wait: each unit is told once
	// however many units the queue admits one after the other.
	reason := schedtypes.Reason{Kind: schedtypes.WaitForPods, Subject: string(it.q.Name)}
	f := &schedtypes.Failure{Reason: reason, HeldBack: true, Message: WaitForPodsMessage(it.q.Name)}
	for ; it.pos < len(it.units); it.pos++ {
		u := it.units[it.pos]
		if u.Pending.Failure == nil || u.Pending.Failure.Reason != reason {
			it.record(u, f, res)
		}
	}
}

// finish ends the queue's turn after a covering refusal of u: the units
// never tried get that refusal (marked Inferred) so they can say why they
// wait; the others keep theirs.
func (it *queueIter) finish(u *schedtypes.Unit, f *schedtypes.Failure, res *PassResult) {
	q := it.q
	if q.untried == 0 {
		it.pos = len(it.units)
		return
	}
	for ; it.pos < len(it.units); it.pos++ {
		if it.depthReached() {
			it.beyondDepth(res)
			return
		}
		x := it.units[it.pos]
		if x.Pending.Failure == nil {
			it.examined++
			res.Examined++
			g := *f
			g.Inferred, g.Covering = true, false
			// Of u's quota (allCover), so of the cohort u was just tried in:
			// x waits for a release there, not in the cohort it was taken
			// in with.
			x.Cohort = u.Cohort
			it.record(x, &g, res)
		}
		it.note(x)
	}
}

// depthReached reports whether the queue's max-depth (ignored by
// Intelligent) is used up for this pass.
func (it *queueIter) depthReached() bool {
	q := it.q
	return q.MaxDepth > 0 && q.Policy != schedv1alpha1.QueuePolicyIntelligent && it.examined >= q.MaxDepth
}

func (it *queueIter) record(u *schedtypes.Unit, f *schedtypes.Failure, res *PassResult) {
	if u.Pending.Failure == nil {
		it.q.untried--
	}
	changed := u.Pending.Failure == nil || u.Pending.Failure.Reason != f.Reason || u.Pending.Failure.Blocking != f.Blocking
	u.Pending.Failure, u.Pending.Epoch, u.Pending.Walk = f, it.epochs.global, schedtypes.WalkStateOf(f)
	if f.Recheck != nil && f.Recheck.Lack != nil {
		// From the pass's start: room given back since then counts as
		// given back after the refusal, which can only try it sooner.
		r := f.Recheck.Lack.Resource
		u.Pending.FreedBase, u.Pending.Priority = it.epochs.freedBase(u.Cohort, r), u.Priority
		// Live: what this pass admitted before it is in its Lack already.
		u.Pending.TakenBase = it.m.epochs.takenNow(u.Cohort, r)
	}
	res.Failed = append(res.Failed, Outcome{Unit: u, Queue: it.q.Name, Failure: f, Changed: changed})
}
