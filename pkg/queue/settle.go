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
	"slices"
	"sort"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// settled is what the last complete walk of a queue left behind. After a
// walk, every unit of the queue was either decided (refused, its failure
// recorded) or not worth trying; walking it again gives the same answers
// until one of these happens, and a pass skips the queue until then:
//   - the queue changes (a unit comes, goes or changes; its settings change);
//   - the epoch of a cohort its units wait on moves past the walk (room
//     freed, a nomination ended), or everything is invalidated.
//
// A queue is not settled when its answers may change with nothing of that
// happening: time or pods starting (max-wait, wait-for-pods-running), or a
// unit that try answered with a failure tried again in every pass (a
// HeldBack failure not UntilCohortChanges, such as a stale entry).
type settled struct {
	// at is the global epoch of the pass that walked the queue; 0 when the
	// queue is not settled.
	at uint64
	// cohorts are the distinct cohorts of the queue's units at that walk.
	cohorts []schedtypes.CohortName
}

// unsettle makes the next pass walk q.
func (q *pendingQueue) unsettle() { q.settled.at = 0 }

// opens reports whether f, an answer of try, leaves its unit worth trying
// in every pass (see epochSnapshot.eligible).
func opens(f *schedtypes.Failure) bool {
	return f != nil && f.HeldBack && !f.UntilCohortChanges
}

// settle records that the queue of it was walked in full by the pass that
// saw epochs, unless a walk could answer differently next time with
// nothing changed.
func (it *queueIter) settle(epochs epochSnapshot) {
	q := it.q
	if it.open || q.untried > 0 || q.MaxWait > 0 || q.WaitForPodsRunning {
		q.settled.at = 0
		return
	}
	cohorts := q.settled.cohorts[:0]
	for _, u := range q.units {
		if !slices.Contains(cohorts, u.Cohort) {
			cohorts = append(cohorts, u.Cohort)
		}
	}
	q.settled = settled{at: epochs.global, cohorts: cohorts}
}

// quiet reports whether a pass that sees epochs may skip q: nothing that
// could change an answer of its units happened since its last walk.
func (q *pendingQueue) quiet(epochs epochSnapshot) bool {
	at := q.settled.at
	if at == 0 || epochs.invalidated > at {
		return false
	}
	for _, c := range q.settled.cohorts {
		if epochs.cohort[c] > at {
			return false
		}
	}
	return true
}

// tiers groups queues by priority, highest first; inside a tier queues are by
// name, rotated by the tier's round-robin counter. The sorted grouping is
// kept until a queue is added, removed or changes priority (m.order); each
// call returns fresh slices, so callers may keep them.
func (m *Manager) tiers() [][]*pendingQueue {
	if m.order == nil {
		m.order = sortedTiers(m.queues)
	}
	out := make([][]*pendingQueue, 0, len(m.order))
	for _, tier := range m.order {
		n := len(tier)
		rotated := make([]*pendingQueue, 0, n)
		if n > 1 {
			k := m.rr[tier[0].Priority] % n
			rotated = append(append(rotated, tier[k:]...), tier[:k]...)
		} else {
			rotated = append(rotated, tier...)
		}
		out = append(out, rotated)
	}
	return out
}

func sortedTiers(queues map[schedtypes.QueueName]*pendingQueue) [][]*pendingQueue {
	byPrio := map[int32][]*pendingQueue{}
	for _, q := range queues {
		byPrio[q.Priority] = append(byPrio[q.Priority], q)
	}
	prios := make([]int32, 0, len(byPrio))
	for p := range byPrio {
		prios = append(prios, p)
	}
	sort.Slice(prios, func(i, j int) bool { return prios[i] > prios[j] })
	out := make([][]*pendingQueue, 0, len(prios))
	for _, p := range prios {
		tier := byPrio[p]
		sort.Slice(tier, func(i, j int) bool { return tier[i].Name < tier[j].Name })
		out = append(out, tier)
	}
	return out
}
