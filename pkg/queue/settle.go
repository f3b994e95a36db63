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
	cohorts []schedtypes.CohortName
	quotas  []schedtypes.QuotaName
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
	cohorts, quotas := q.settled.cohorts[:0], q.settled.quotas[:0]
	for _, u := range q.units {
		if !slices.Contains(cohorts, u.Cohort) {
			cohorts = append(cohorts, u.Cohort)
		}
		if !slices.Contains(quotas, u.Quota) {
			quotas = append(quotas, u.Quota)
		}
	}
	q.settled = settled{at: epochs.global, cohorts: cohorts, quotas: quotas}
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

// quietLocked is quiet for one queue, under epochs.e.mu.
func (q *pendingQueue) quietLocked(epochs epochSnapshot) bool {
	at := q.settled.at
	if at == 0 || epochs.invalidated > at {
		return false
	}
	for _, c := range q.settled.cohorts {
		if epochs.cohort[c] > at {
			return false
		}
	}
	for _, name := range q.settled.quotas {
		if epochs.e.quota[name].changedSince(at, math.MaxInt64) {
			return false
		}
	}
	return true
}
