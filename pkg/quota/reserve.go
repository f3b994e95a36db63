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

package quota

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
)

// HeldRoom judges requests against the room held in a cohort for waiting
// units of higher priority (the list itself is the queue's, see
// pkg/queue's reservations), by reading the tree: whether a request fits
// beside that room, and whether a waiting unit could fit at all once units
// of lower priority gave back theirs, so that room is worth holding for it.
// It shares the tree's lock.
type HeldRoom struct {
	t *Tree
}

// NewHeldRoom returns the held-room checks of t.
func NewHeldRoom(t *Tree) *HeldRoom { return &HeldRoom{t: t} }

// HeldShortage says why a request that fits on its own does not fit beside
// the room held for waiting units of higher priority.
type HeldShortage struct {
	// Quota is where the room runs out; Used, Limit and Kept (what quotas
	// that do not lend their min keep) are its figures for Resource.
	Quota                        schedtypes.QuotaName
	Resource                     corev1.ResourceName
	Requested, Used, Limit, Kept int64
	// Held is how much of Resource is held at Quota for waiting units;
	// First is the one of highest priority among them, the unit named.
	Held   int64
	First  schedtypes.Reservation
	Others int
}

// Reason is the wait without its changing numbers.
func (s *HeldShortage) Reason() schedtypes.Reason {
	return schedtypes.Reason{Kind: schedtypes.WaitRoomHeld, Subject: string(s.Quota), Detail: string(s.First.Unit)}
}

// Message renders the wait for a unit's status and events.
func (s *HeldShortage) Message() string {
	r := s.Resource
	others := ""
	if s.Others > 0 {
		others = fmt.Sprintf(" and %d other waiting unit(s) of higher priority", s.Others)
	}
	free := max(resources.SubSat(resources.SubSat(s.Limit, s.Used), s.Kept), 0)
	return fmt.Sprintf("waits behind %s (priority %d, quota %s, requests %s %s), for which room is held: quota %s has %s %s free (used %s, max %s), of which %s held for it%s; the unit requests %s %s",
		s.First.Unit, s.First.Priority, s.First.Quota, schedtypes.Format(r, s.First.Request[r]), r,
		s.Quota, schedtypes.Format(r, free), r, schedtypes.Format(r, s.Used), schedtypes.Format(r, s.Limit), schedtypes.Format(r, s.Held), others, schedtypes.Format(r, s.Requested), r)
}

// Check tells whether req, which fits quota name on its own, also fits
// beside held: room kept for waiting units, counted as used at every quota on
// both the unit's path and the waiting unit's. held is in priority order,
// highest first; nil means it fits.
//
// Room held for a unit that would borrow (its quota would go above its min)
// does not hold back a unit of another branch that stays within its own min:
// the room is guaranteed to the latter, and a borrower admitted into it would
// only be reclaimed.
func (hr *HeldRoom) Check(name schedtypes.QuotaName, req schedtypes.Resources, held []schedtypes.Reservation) *HeldShortage {
	t := hr.t
	leaf, ok := t.nodes[name]
	if !ok || len(held) == 0 {
		return nil
	}
	guaranteed := t.withinMin(name, req)
	// yields: h is on another branch below n (from is the unit's) and would borrow.
	yields := func(from *node, h schedtypes.Reservation) bool {
		return guaranteed && from != nil && !t.isAncestor(from, t.nodes[h.Quota]) && t.WouldBorrow(h.Quota, h.Request)
	}
	var from *node
	for n := leaf; n != t.root; from, n = n, n.parent {
		if !n.exists || len(n.spec.Max) == 0 {
			continue
		}
		kept := t.reservedBesides(n, from)
		for _, r := range req.Names() {
			lim, limited := t.limit(n, r)
			if !limited {
				continue
			}
			s := HeldShortage{Quota: n.spec.Name, Resource: r, Requested: req[r], Used: n.used[r], Limit: lim, Kept: kept[r]}
			for _, h := range held {
				// Counted where the holder's path meets the unit's: n is the
				// holder's quota or one of its ancestors.
				if h.Request[r] == 0 || !t.isAncestor(n, t.nodes[h.Quota]) || yields(from, h) {
					continue
				}
				if s.Held == 0 {
					s.First = h
				} else {
					s.Others++
				}
				s.Held = resources.AddSat(s.Held, h.Request[r])
			}
			if s.Held > 0 && exceeds(s.Limit, s.Requested, s.Used, s.Kept, s.Held) {
				return &s
			}
		}
	}
	return nil
}

// CouldFit reports whether req would fit quota name once the holdings of
// held that gone picks (admitted units of lower priority, say) had given
// back what they hold. A request that can never fit, or a quota that is
// missing or broken, could not.
func (hr *HeldRoom) CouldFit(name schedtypes.QuotaName, req schedtypes.Resources, held map[schedtypes.QuotaName][]schedtypes.Holding, gone func(schedtypes.Holding) bool) bool {
	return hr.CouldFitFreed(name, req, func(under schedtypes.QuotaName) schedtypes.Resources {
		var out schedtypes.Resources
		for q, hs := range held {
			if !hr.t.Under(q, under) {
				continue
			}
			for _, h := range hs {
				if gone(h) {
					out = out.Add(h.Used)
				}
			}
		}
		return out
	})
}

// CouldFitFreed is CouldFit with what would be given back below each quota
// of name's path (name and its ancestors) told by freed, so that a caller
// asking for many quotas of one cohort can sum each ancestor's once.
func (hr *HeldRoom) CouldFitFreed(name schedtypes.QuotaName, req schedtypes.Resources, freed func(under schedtypes.QuotaName) schedtypes.Resources) bool {
	t := hr.t
	if t.Problem(name) != nil {
		return false
	}
	leaf := t.nodes[name]
	if t.neverFits(leaf, req) != nil {
		return false
	}
	var from *node // the child of n on the unit's path
	for n := leaf; n != t.root; from, n = n, n.parent {
		if !n.exists || len(n.spec.Max) == 0 {
			continue
		}
		kept := t.reservedBesides(n, from)
		back := freed(n.spec.Name)
		for r, v := range req {
			if lim, limited := t.limit(n, r); limited && exceeds(lim, v, resources.SubSat(n.used[r], back[r]), kept[r]) {
				return false
			}
		}
	}
	return true
}
