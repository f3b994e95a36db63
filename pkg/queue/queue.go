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
	"sort"
	"time"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// Settings are a Queue's policy and tuning.
type Settings struct {
	Name     schedtypes.QueueName
	Policy   schedv1alpha1.QueuePolicy
	Priority int32
	// MaxDepth bounds the units one pass looks at; 0 means no bound. Ignored
	// by Intelligent.
	MaxDepth int
	// Threshold splits Intelligent's bands: priority >= Threshold is high.
	Threshold int32
	// WaitForPodsRunning holds the queue until the last unit it admitted has
	// its pods running. Ignored by Intelligent.
	WaitForPodsRunning bool
	// Preempt lets a unit that does not fit evict lower-priority admitted
	// units of its own quota (preemption policy LowerPriority).
	Preempt bool
	// MaxWait bounds the wait of a unit that does not fit (0: no bound): once
	// it has waited longer, it holds back later units of its quota, as under
	// Block, until it is admitted.
	MaxWait time.Duration
	// HoldRoom lets a unit of the queue that waits for room it could get once
	// units of lower priority finish hold that room in its cohort (see
	// reservations). Off: nothing is held for the queue's units.
	HoldRoom bool
}

type pendingQueue struct {
	Settings
	units []*schedtypes.Unit

	// What every unit of the queue is known to share, for a pass to stop
	// early (see Failure.Covering). minRequest is a lower bound of every
	// unit's request, per resource; quota is the units' quota, unless mixed.
	// Both are reset when the queue empties, and only loosen in between.
	minRequest schedtypes.Resources
	quota      schedtypes.QuotaName
	mixed      bool
	// untried counts the units never tried (no failure yet).
	untried int
	// settled lets a pass skip the queue (see settle.go).
	settled settled
}

func (q *pendingQueue) index(u *schedtypes.Unit, less schedtypes.Less) int {
	return sort.Search(len(q.units), func(i int) bool { return !less(q.units[i], u) })
}

func (q *pendingQueue) insert(u *schedtypes.Unit, less schedtypes.Less) {
	q.unsettle()
	if len(q.units) == 0 {
		q.minRequest, q.quota, q.mixed, q.untried = u.Request.Clone(), u.Quota, false, 0
	} else {
		for r, v := range q.minRequest {
			if u.Request[r] < v {
				q.minRequest[r] = u.Request[r]
			}
		}
		if u.Quota != q.quota {
			q.mixed = true
		}
	}
	if u.Pending.Failure == nil {
		q.untried++
	}
	i := q.index(u, less)
	q.units = append(q.units, nil)
	copy(q.units[i+1:], q.units[i:])
	q.units[i] = u
}

func (q *pendingQueue) remove(u *schedtypes.Unit, less schedtypes.Less) bool {
	if !q.removeAt(u, less) {
		return false
	}
	q.unsettle()
	if u.Pending.Failure == nil {
		q.untried--
	}
	if len(q.units) == 0 {
		q.minRequest, q.quota, q.mixed, q.untried = nil, "", false, 0
	}
	return true
}

// allCover reports whether every unit of the queue is of quotaName and asks
// at least req of every resource req names.
func (q *pendingQueue) allCover(quotaName schedtypes.QuotaName, req schedtypes.Resources) bool {
	return !q.mixed && q.quota == quotaName && q.minRequest.Covers(req)
}

func (q *pendingQueue) removeAt(u *schedtypes.Unit, less schedtypes.Less) bool {
	i := q.index(u, less)
	// Units equal under less sit together; find this one among them.
	for j := i; j < len(q.units); j++ {
		if q.units[j] == u {
			q.units = append(q.units[:j], q.units[j+1:]...)
			return true
		}
		if less(u, q.units[j]) {
			break
		}
	}
	// The order may have changed under us (a stale key); fall back to a scan.
	for j, x := range q.units {
		if x == u {
			q.units = append(q.units[:j], q.units[j+1:]...)
			return true
		}
	}
	return false
}

// blocks reports whether u is handled like Block in this queue.
func (q *pendingQueue) blocks(u *schedtypes.Unit) bool {
	switch q.Policy {
	case schedv1alpha1.QueuePolicyBlock:
		return true
	case schedv1alpha1.QueuePolicyIntelligent:
		return u.Priority >= q.Threshold
	default:
		return false
	}
}
