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

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// servingOrder decides in which order a pass serves the queues: tiers by
// priority, highest first; inside a tier by fair share when it is asked
// for, else the queues below their min first and then by turns, the start
// rotating from one pass to the next. It is guarded by the manager's lock;
// its functions must not call back into the manager.
type servingOrder struct {
	// sorted is the queues grouped by priority and sorted by name; nil when
	// it must be built again.
	sorted [][]*pendingQueue
	// rr rotates the start among queues of equal priority.
	rr map[int32]int
	// share, when set, orders the queues of a tier by fair share while
	// shareOn (nil: always) is true; lower goes first.
	share   func(queueName schedtypes.QueueName) float64
	shareOn func() bool
	// guaranteed, when set, says a queue's quota uses less than its min:
	// such queues take their turns first.
	guaranteed func(queueName schedtypes.QueueName) bool
}

func newServingOrder() servingOrder { return servingOrder{rr: map[int32]int{}} }

// reset makes the next tiers sort the queues again (one was added,
// removed, or changed priority).
func (o *servingOrder) reset() { o.sorted = nil }

// tiers groups queues by priority, highest first; inside a tier queues are
// by name, rotated by the tier's turn counter. Each call returns fresh
// slices, so callers may keep them.
func (o *servingOrder) tiers(queues map[schedtypes.QueueName]*pendingQueue) [][]*pendingQueue {
	if o.sorted == nil {
		o.sorted = sortedTiers(queues)
	}
	out := make([][]*pendingQueue, 0, len(o.sorted))
	for _, tier := range o.sorted {
		n := len(tier)
		rotated := make([]*pendingQueue, 0, n)
		if n > 1 {
			k := o.rr[tier[0].Priority] % n
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

// serve serves the queues named of one tier (as tiers returned it; names
// are the ones worth walking, in that order) until each is done: step(i)
// serves names[i] until it admits one unit (true) or is done for the pass
// (false). A tier served by turns starts one queue further next time.
func (o *servingOrder) serve(tier []*pendingQueue, names []schedtypes.QueueName, step func(i int) bool) {
	live := make([]int, len(names))
	for i := range live {
		live[i] = i
	}
	if o.share != nil && len(live) > 1 && (o.shareOn == nil || o.shareOn()) {
		o.byShare(names, live, step)
		return
	}
	live = o.guaranteedFirst(names, live, step)
	for len(live) > 0 {
		next := live[:0]
		for _, i := range live {
			if step(i) {
				next = append(next, i)
			}
		}
		live = next
	}
	if len(tier) > 1 {
		o.rr[tier[0].Priority]++
	}
}

// guaranteedFirst lets the queues of a tier whose quota uses less than its
// min take their turns (one admission each, in tier order) before the
// others, for as long as they stay below it and admit something; it returns
// the queues left for the common turns. Room freed in a cohort then goes to
// the quota it is guaranteed to before another quota borrows it, which that
// quota would take back at once by reclaim (an eviction for nothing).
func (o *servingOrder) guaranteedFirst(names []schedtypes.QueueName, live []int, step func(i int) bool) []int {
	if o.guaranteed == nil {
		return live
	}
	for {
		stepped := false
		next := live[:0]
		for _, i := range live {
			if o.guaranteed(names[i]) {
				if !step(i) {
					continue // walked in full
				}
				stepped = true
			}
			next = append(next, i)
		}
		live = next
		if !stepped {
			return live
		}
	}
}

// byShare serves the queues of one tier by fair share: each admission goes
// to the queue whose quota is furthest below its share (lowest share), ties
// in tier order. A queue's share moves only with its own admissions, so
// only its value is asked again after a step.
func (o *servingOrder) byShare(names []schedtypes.QueueName, live []int, step func(i int) bool) {
	shares := make([]float64, len(live))
	for k, i := range live {
		shares[k] = o.share(names[i])
	}
	for len(live) > 0 {
		best := 0
		for k := 1; k < len(live); k++ {
			if shares[k] < shares[best] {
				best = k
			}
		}
		if step(live[best]) {
			shares[best] = o.share(names[live[best]])
			continue
		}
		live = append(live[:best], live[best+1:]...)
		shares = append(shares[:best], shares[best+1:]...)
	}
}
