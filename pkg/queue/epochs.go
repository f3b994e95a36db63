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
	"maps"
	"math"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
)

// epochs count the events that can make a waiting unit fit.
type epochs struct {
	mu          sync.Mutex
	global      uint64
	invalidated uint64
	// cohort moves with every event of a cohort; unknown only with room
	// freed in an amount nobody counted. freed is, by cohort, the room given
	// back so far, a running sum per resource (each map is replaced, never
	// changed, so a snapshot may share it).
	cohort  map[schedtypes.CohortName]uint64
	unknown map[schedtypes.CohortName]uint64
	freed   map[schedtypes.CohortName]schedtypes.Resources
	// taken is, by cohort, the room the passes' admissions took so far, a
	// running sum per resource (read live, under mu).
	taken map[schedtypes.CohortName]schedtypes.Resources
	// quota is, by quota, when what its units hold last changed.
	quota map[schedtypes.QuotaName]*holdingEpochs
}

// holdingEpochs are when what the units of one quota hold last changed:
// released when one gave something back, charged (by the priority of the
// unit charged) when one came to hold more.
type holdingEpochs struct {
	released uint64
	charged  map[int32]uint64
	// last is the latest of them all.
	last uint64
}

// moved records an event of cohort that is not room given back: waiting
// units refused for want of room stay as they are.
func (e *epochs) moved(cohort schedtypes.CohortName) {
	e.mu.Lock()
	e.global++
	e.cohort[cohort] = e.global
	e.mu.Unlock()
}

// freedUnknown records room given back in cohort in an amount not counted.
func (e *epochs) freedUnknown(cohort schedtypes.CohortName) {
	e.mu.Lock()
	e.global++
	e.cohort[cohort] = e.global
	e.unknown[cohort] = e.global
	e.mu.Unlock()
}

// freedRoom records amount of room given back in cohort.
func (e *epochs) freedRoom(cohort schedtypes.CohortName, amount schedtypes.Resources) {
	e.mu.Lock()
	e.global++
	e.cohort[cohort] = e.global
	sum := make(schedtypes.Resources, len(e.freed[cohort])+len(amount))
	for r, v := range e.freed[cohort] {
		sum[r] = v
	}
	for r, v := range amount {
		if v > 0 {
			sum[r] = resources.AddSat(sum[r], v)
		}
	}
	e.freed[cohort] = sum
	e.mu.Unlock()
}

// took records amount of room taken in cohort by an admission.
func (e *epochs) took(cohort schedtypes.CohortName, amount schedtypes.Resources) {
	e.mu.Lock()
	defer e.mu.Unlock()
	sum := e.taken[cohort]
	if sum == nil {
		sum = schedtypes.Resources{}
		e.taken[cohort] = sum
	}
	for r, v := range amount {
		if v > 0 {
			sum[r] = resources.AddSat(sum[r], v)
		}
	}
}

// takenNow is the room taken in cohort so far of resource r.
func (e *epochs) takenNow(cohort schedtypes.CohortName, r corev1.ResourceName) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.taken[cohort][r]
}

// holdings records a change to what the units of quota hold: released when
// one gave something back, else a charge of a unit at priority.
func (e *epochs) holdings(quota schedtypes.QuotaName, priority int32, released bool) {
	e.mu.Lock()
	e.global++
	h := e.quota[quota]
	if h == nil {
		h = &holdingEpochs{charged: map[int32]uint64{}}
		e.quota[quota] = h
	}
	if released {
		h.released = e.global
	} else {
		h.charged[priority] = e.global
	}
	h.last = e.global
	e.mu.Unlock()
}

func (e *epochs) invalidate() {
	e.mu.Lock()
	e.global++
	e.invalidated = e.global
	e.mu.Unlock()
}

// epochSnapshot is the epochs as a pass saw them when it started. Units that
// fail in the pass record its global epoch, so any event during or after the
// pass makes them eligible again. What units of a quota hold is read live
// (from e), since it changes with the pass's own admissions.
type epochSnapshot struct {
	global, invalidated uint64
	cohort, unknown     map[schedtypes.CohortName]uint64
	freed               map[schedtypes.CohortName]schedtypes.Resources
	e                   *epochs
}

func (e *epochs) snapshot() epochSnapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.peekLocked()
	// Later events must compare greater than what failures record now.
	e.global++
	return s
}

func (e *epochs) peekLocked() epochSnapshot {
	return epochSnapshot{global: e.global, invalidated: e.invalidated, cohort: maps.Clone(e.cohort), unknown: maps.Clone(e.unknown),
		freed: maps.Clone(e.freed), e: e}
}

// eligible reports whether u, in a queue of settings q, is worth trying: it
// was never refused, or something happened since that could change its
// answer. A refusal with a Lack waits for room in that amount (see
// schedtypes.Recheck); any other waits for any event of its cohort. So does
// a unit holding room (Settings.HoldRoom), which must learn when it no
// longer could fit by evictions, to give the room up.
func (s epochSnapshot) eligible(u *schedtypes.Unit, q *Settings) bool {
	w := &u.Pending.Walk
	if !w.Waits {
		return true
	}
	if s.invalidated > u.Pending.Epoch {
		return true
	}
	if !waitsForRoom(w, q) {
		return s.cohort[u.Cohort] > u.Pending.Epoch
	}
	preempt := q.Preempt
	if w.Preempt != preempt || u.Priority != u.Pending.Priority || s.unknown[u.Cohort] > u.Pending.Epoch {
		return true
	}
	l := &w.Lack
	if s.e.roomSince(s.freed[u.Cohort][l.Resource], u, l) >= l.Amount {
		return true
	}
	return s.e.holdingsChanged(u.Quota, u.Pending.Epoch, u.Priority, preempt)
}

// waitsForRoom reports whether w, a refusal of a unit in a queue of
// settings q as a walk reads it, waits only for room in the amount of its
// Lack, and for what its quota holds: no other event of its cohort can
// answer it.
func waitsForRoom(w *schedtypes.WalkState, q *Settings) bool {
	return w.Waits && w.ForRoom && (!w.Reserves || !q.HoldRoom)
}

// holdingsChanged reports whether what units of quota hold changed after
// epoch in a way that could answer a unit of priority refused for want of
// room: one gave something back (it may fit, or reclaim), or, when it may
// preempt, one of lower priority came to hold more (a new victim).
func (e *epochs) holdingsChanged(quota schedtypes.QuotaName, epoch uint64, priority int32, preempt bool) bool {
	below := int64(math.MinInt64)
	if preempt {
		below = int64(priority)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.quota[quota].changedSince(epoch, below)
}

// changedSince reports whether, after epoch, a unit gave something back or
// one of priority below below came to hold more (math.MaxInt64: any charge
// counts; math.MinInt64: none does). A nil h saw no change. Under e.mu.
func (h *holdingEpochs) changedSince(epoch uint64, below int64) bool {
	if h == nil {
		return false
	}
	if h.released > epoch {
		return true
	}
	if h.last <= epoch {
		return false
	}
	if below == math.MaxInt64 {
		return true
	}
	for p, at := range h.charged {
		if int64(p) < below && at > epoch {
			return true
		}
	}
	return false
}

// freedBase is the room given back in cohort so far of resource r, as the
// snapshot saw it.
func (s epochSnapshot) freedBase(cohort schedtypes.CohortName, r corev1.ResourceName) int64 {
	return s.freed[cohort][r]
}

// peek returns the epochs without moving them (for read-only views).
func (e *epochs) peek() epochSnapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.peekLocked()
}

// roomSince is the room unit u, refused lacking l, may have gained since:
// what its cohort gave back since (freed is the running sum the pass saw),
// less, for a lack at the cohort's top (Lack.Root), what admissions there
// took since, read live so that a pass's own admissions count at once.
func (e *epochs) roomSince(freed int64, u *schedtypes.Unit, l *schedtypes.Lack) int64 {
	var taken int64
	if l.Root {
		taken = e.takenNow(u.Cohort, l.Resource)
	}
	return roomSinceAt(freed, taken, u, l)
}

// roomSinceAt is roomSince with the running sum of room taken at the
// cohort's top given (taken; unused unless l.Root).
func roomSinceAt(freed, taken int64, u *schedtypes.Unit, l *schedtypes.Lack) int64 {
	since := freedSince(freed, u.Pending.FreedBase)
	if !l.Root {
		return since
	}
	return netOf(since, taken, u.Pending.TakenBase)
}

// netOf is room given back (since) less room taken since base of the
// running sum taken; a sum held at the largest int64 counts nothing taken.
func netOf(since, taken, base int64) int64 {
	if since == math.MaxInt64 || taken == math.MaxInt64 {
		return since
	}
	return since - (taken - base)
}

// freedSince is the room given back since base, from a running sum of it;
// a sum held at the largest int64 (resources.AddSat) counts as unbounded.
func freedSince(sum, base int64) int64 {
	if sum == math.MaxInt64 {
		return math.MaxInt64
	}
	return sum - base
}
