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
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// settled is what the last complete walk of a queue left behind. After a
// walk, every unit of the queue was either decided (refused, its failure
// recorded) or not worth trying; walking it again gives the same answers
// until one of these happens, and a pass skips the queue until then:
//   - the queue changes (a unit comes, goes or changes; its settings change);
//   - the epoch of a cohort its units wait on moves past the walk (room
//     freed, a nomination ended), or everything is invalidated;
//   - what the units of one of its quotas hold changes.
//
// In a cohort where every unit of the queue waits for room in an amount
// (waitsForRoom), only room given back in an amount nobody counted, or
// counted room that covers the least any of them still lacks, counts.
//
// A queue is not settled when its answers may change with nothing of that
// happening: time or pods starting (max-wait, wait-for-pods-running), or a
// unit that try answered with a failure tried again in every pass (a
// HeldBack failure not UntilCohortChanges, such as a stale entry).
type settled struct {
	// at is the global epoch of the pass that walked the queue; 0 when the
	// queue is not settled.
	at uint64
	// cohorts and quotas are the distinct cohorts and quotas of the queue's
	// units at that walk.
	cohorts []settledCohort
	quotas  []schedtypes.QuotaName
}

// settledCohort is a cohort the units of a settled queue wait on.
type settledCohort struct {
	name schedtypes.CohortName
	// forRoom: every unit of the queue in the cohort waits for room in an
	// amount; lacks then holds, by resource, the least room still lacking.
	forRoom bool
	lacks   []settledLack
	// freed is the cohort's running sums of room given back, as the walk
	// saw them (epochSnapshot.freed).
	freed schedtypes.Resources
}

// settledLack is the least room of a resource that must be given back in a
// cohort, over base (the room given back so far as the walk saw it), before
// a unit waiting for it is worth a try.
type settledLack struct {
	resource corev1.ResourceName
	// root: the lacks of units refused at the cohort's top, net of the
	// room admissions took there since takenBase (see Lack.Root).
	root                   bool
	base, takenBase, slack int64
}

// unsettle makes the next pass walk q.
func (q *pendingQueue) unsettle() { q.settled.at = 0 }

// opens reports whether f, an answer of try, leaves its unit worth trying
// in every pass (see epochSnapshot.eligible).
func opens(f *schedtypes.Failure) bool {
	return f != nil && f.HeldBack && !f.UntilCohortChanges
}

// note counts unit u, left waiting by the walk, in what the
// queue's settling will be (see settle).
func (it *queueIter) note(u *schedtypes.Unit) {
	if !it.noting {
		return
	}
	// The units of a queue mostly share one quota and cohort: the last one
	// found is looked at first.
	cohorts, i := it.cohorts, it.last
	if i < 0 || cohorts[i].name != u.Cohort {
		i = indexOfCohort(cohorts, u.Cohort)
	}
	if i < 0 {
		i = len(cohorts)
		if i < cap(cohorts) {
			// Keep the lacks' array of the entry reused.
			cohorts = cohorts[:i+1]
			cohorts[i] = settledCohort{name: u.Cohort, forRoom: true, lacks: cohorts[i].lacks[:0]}
		} else {
			cohorts = append(cohorts, settledCohort{name: u.Cohort, forRoom: true})
		}
		cohorts[i].freed = it.epochs.freed[u.Cohort]
		it.cohorts = cohorts
	}
	it.last = i
	cohorts[i].add(u, &it.q.Settings, it.epochs)
	if n := len(it.quotas); n == 0 || it.quotas[n-1] != u.Quota && !slices.Contains(it.quotas, u.Quota) {
		it.quotas = append(it.quotas, u.Quota)
	}
}

// settle records that the queue of it was walked in full by its pass,
// unless a walk could answer differently next time with nothing changed.
// The units the walk left waiting were noted as it went. Those it did not
// reach are left out: the walk stopped before them at the queue's
// max-depth, or at a covering refusal (every later unit is of the refused
// unit's quota, of lower or equal rank, and asks at least as much), and
// the next walk stops at the same place until something noted changes.
// Noting them too would read every waiting unit of a long queue in each
// pass, and could only make the queue be walked again for the same
// answers.
func (it *queueIter) settle() {
	q := it.q
	if it.open || q.untried > 0 || !it.noting {
		q.settled.at = 0
		return
	}
	// The queue takes the arrays gathered, the walk keeps the queue's old
	// ones for its next use.
	old := q.settled
	q.settled = settled{at: it.epochs.global, cohorts: it.cohorts, quotas: it.quotas}
	it.cohorts, it.quotas = old.cohorts[:0], old.quotas[:0]
}

func indexOfCohort(cohorts []settledCohort, name schedtypes.CohortName) int {
	for i := range cohorts {
		if cohorts[i].name == name {
			return i
		}
	}
	return -1
}

// add counts waiting unit u of a queue of settings q, as a walk that saw
// epochs left it, in the cohort's least lacks. The room given back and
// taken so far are read once per cohort and resource, for its first unit.
func (c *settledCohort) add(u *schedtypes.Unit, q *Settings, epochs epochSnapshot) {
	if !c.forRoom {
		return
	}
	w := &u.Pending.Walk
	if !waitsForRoom(w, q) {
		c.forRoom = false
		return
	}
	l := &w.Lack
	j := slices.IndexFunc(c.lacks, func(s settledLack) bool { return s.resource == l.Resource && s.root == l.Root })
	var base, takenBase int64
	if j >= 0 {
		base, takenBase = c.lacks[j].base, c.lacks[j].takenBase
	} else {
		base = c.freed[l.Resource]
		if l.Root {
			takenBase = epochs.e.takenNow(c.name, l.Resource)
		}
	}
	slack := l.Amount - roomSinceAt(base, takenBase, u, l)
	if slack <= 0 {
		// Worth a try already (never so after a whole walk): no skipping.
		c.forRoom = false
		return
	}
	if j >= 0 {
		c.lacks[j].slack = min(c.lacks[j].slack, slack)
		return
	}
	c.lacks = append(c.lacks, settledLack{resource: l.Resource, root: l.Root, base: base, takenBase: takenBase, slack: slack})
}

// quiet reports, for each queue of a tier, whether a pass that sees epochs
// may skip it: nothing that could change an answer of its units happened
// since its last walk. It takes the epochs' lock once for the whole tier.
func (epochs epochSnapshot) quiet(tier []*pendingQueue) []bool {
	out := make([]bool, len(tier))
	epochs.e.mu.Lock()
	defer epochs.e.mu.Unlock()
	for i, q := range tier {
		out[i] = q.quietLocked(epochs)
	}
	return out
}

// stillQuiet is quiet for one queue, asked again as the pass reaches it:
// admissions of the pass may have taken the room that made it worth a walk.
func (epochs epochSnapshot) stillQuiet(q *pendingQueue) bool {
	epochs.e.mu.Lock()
	defer epochs.e.mu.Unlock()
	return q.quietLocked(epochs)
}

// quietLocked is quiet for one queue, under epochs.e.mu.
func (q *pendingQueue) quietLocked(epochs epochSnapshot) bool {
	at := q.settled.at
	if at == 0 || epochs.invalidated > at {
		return false
	}
	for _, c := range q.settled.cohorts {
		if !c.forRoom {
			if epochs.cohort[c.name] > at {
				return false
			}
			continue
		}
		if epochs.unknown[c.name] > at {
			return false
		}
		for _, l := range c.lacks {
			room := freedSince(epochs.freed[c.name][l.resource], l.base)
			if l.root {
				room = netOf(room, epochs.e.taken[c.name][l.resource], l.takenBase)
			}
			if room >= l.slack {
				return false
			}
		}
	}
	for _, name := range q.settled.quotas {
		if epochs.e.quota[name].changedSince(at, math.MaxInt64) {
			return false
		}
	}
	return true
}
