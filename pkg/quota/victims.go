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
	"slices"
	"strings"
	"time"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// Preemption asks for room for one unit.
type Preemption struct {
	Quota    schedtypes.QuotaName
	Request  schedtypes.Resources
	Priority int32
	// Preempt allows evicting lower-priority units of the same quota.
	Preempt bool
	// Reclaim allows a quota within its min to evict units of quotas that
	// borrow above their own min, in the same cohort.
	Reclaim bool
	// Protection keeps units admitted less than this long ago from
	// preemption and reclaim.
	Protection time.Duration
	Now        time.Time
	// Leave, when set, keeps units of held out of the search (the unit
	// itself, units whose admission is being written). It is asked only of
	// the holdings a search looks at, so the caller need not copy held
	// without them for every search.
	Leave func(schedtypes.UnitKey) bool
	// Evicting, when EvictingKnown, are the units of held already on their
	// way out (Holding.Evicting), all of the quota's cohort: a caller that
	// keeps them spares each search a walk of every holding.
	Evicting      []schedtypes.Holding
	EvictingKnown bool
}

// left reports whether the search leaves h out.
func (p Preemption) left(h schedtypes.Holding) bool {
	return p.Leave != nil && p.Leave(h.Key)
}

// VictimSelector chooses the admitted units whose eviction makes room for
// a unit that does not fit, by reading the tree: it simulates evictions on
// it and undoes them before it returns. It shares the tree's lock.
type VictimSelector struct {
	t *Tree
}

// NewVictimSelector returns the victim selector of t.
func NewVictimSelector(t *Tree) *VictimSelector { return &VictimSelector{t: t} }

// lookAhead bounds the protection ends tried to find Protected.
const lookAhead = 16

// Select finds the fewest admitted units whose eviction lets the
// request fit, lowest priority first and then most recently admitted. held
// lists the admitted units by quota. It returns an empty answer when
// evictions cannot make the request fit. The tree is left as it was.
func (vs *VictimSelector) Select(p Preemption, held map[schedtypes.QuotaName][]schedtypes.Holding) schedtypes.Victims {
	t := vs.t
	v := vs.selectAt(p, held)
	if len(v.Units) > 0 || v.RetryAt.IsZero() {
		return v
	}
	// Which units go once their protection ends: the choice made at each
	// coming end of a protection period, earliest first.
	cohort := t.Cohort(p.Quota)
	var ends []time.Time
	for q, hs := range held {
		if t.Cohort(q) != cohort {
			continue
		}
		for _, h := range hs {
			if end := h.AllocatedAt.Add(p.Protection); end.After(p.Now) && !p.left(h) {
				ends = append(ends, end)
			}
		}
	}
	slices.SortFunc(ends, func(a, b time.Time) int { return a.Compare(b) })
	ends = slices.CompactFunc(ends, time.Time.Equal)
	for _, end := range ends[:min(len(ends), lookAhead)] {
		later := p
		later.Now = end
		if w := vs.selectAt(later, held); len(w.Units) > 0 {
			v.Protected, v.FreeAt, v.Reclaim = w.Units, end, w.Reclaim
			break
		}
	}
	return v
}

func (vs *VictimSelector) selectAt(p Preemption, held map[schedtypes.QuotaName][]schedtypes.Holding) schedtypes.Victims {
	t := vs.t
	if t.Problem(p.Quota) != nil || t.NeverFits(p.Quota, p.Request) != nil {
		return schedtypes.Victims{}
	}
	cohort := t.Cohort(p.Quota)
	// Evictions are simulated on the tree itself and undone before returning.
	released := map[schedtypes.UnitKey]schedtypes.Holding{}
	r := releaser{
		release:   func(h schedtypes.Holding) { t.Release(h.Quota, h.Used); released[h.Key] = h },
		unrelease: func(h schedtypes.Holding) { t.Charge(h.Quota, h.Used); delete(released, h.Key) },
	}
	defer func() {
		for _, h := range released {
			t.Charge(h.Quota, h.Used)
		}
	}()
	// Units already on their way out come first.
	evicting := p.Evicting
	if !p.EvictingKnown {
		evicting = nil
		for q, hs := range held {
			if t.Cohort(q) != cohort {
				continue
			}
			for _, h := range hs {
				if h.Evicting {
					evicting = append(evicting, h)
				}
			}
		}
	}
	for _, h := range evicting {
		if !p.left(h) {
			r.release(h)
		}
	}
	if len(released) > 0 && t.Check(p.Quota, p.Request) == nil {
		return schedtypes.Victims{Waiting: true}
	}
	var retryAt time.Time
	// protected reports a unit still in its protection period, and keeps the
	// earliest end of such periods.
	protected := func(h schedtypes.Holding) bool {
		if p.Protection <= 0 {
			return false
		}
		end := h.AllocatedAt.Add(p.Protection)
		if !p.Now.Before(end) {
			return false
		}
		if retryAt.IsZero() || end.Before(retryAt) {
			retryAt = end
		}
		return true
	}
	if p.Preempt {
		var cands []schedtypes.Holding
		for _, h := range held[p.Quota] {
			if !h.Evicting && h.Priority < p.Priority && !p.left(h) && !protected(h) {
				cands = append(cands, h)
			}
		}
		if v := vs.evictUntilFit(p, cands, nil, r); len(v) > 0 {
			return schedtypes.Victims{Units: v}
		}
	}
	// Reclaim judges only the resources the request is short of: a unit
	// within its min of cpu reclaims cpu even when it also asks for memory
	// its quota's min does not name, since memory is not what it waits for.
	if !p.Reclaim {
		return schedtypes.Victims{RetryAt: retryAt}
	}
	if short := vs.short(p.Quota, p.Request); len(short) > 0 && t.withinMin(p.Quota, short) {
		borrowing := func(h schedtypes.Holding) bool { return vs.overMin(h.Quota, short) }
		var cands []schedtypes.Holding
		for q, hs := range held {
			if q == p.Quota || t.Cohort(q) != cohort {
				continue
			}
			for _, h := range hs {
				if !h.Evicting && !p.left(h) && (!borrowing(h) || !protected(h)) {
					cands = append(cands, h)
				}
			}
		}
		if v := vs.evictUntilFit(p, cands, borrowing, r); len(v) > 0 {
			return schedtypes.Victims{Units: v, Reclaim: true}
		}
	}
	return schedtypes.Victims{RetryAt: retryAt}
}

type releaser struct {
	release, unrelease func(schedtypes.Holding)
}

// evictUntilFit releases candidates in victim order until the request fits,
// then gives back any victim that turned out not to be needed. It returns
// nil when they are not enough (the caller undoes every release).
//
// Without eligible (preemption inside one quota) the candidates go lowest
// priority first, then most recently admitted. With it (reclaim, across
// quotas) priority never compares units of two quotas: each is set by the
// tenants of its own quota, so a tenant's priority of 2^31-1 would otherwise
// move every eviction onto the others. Reclaim takes, one unit at a time,
// from the eligible quota that borrows most (see reclaimOrder).
func (vs *VictimSelector) evictUntilFit(p Preemption, cands []schedtypes.Holding, eligible func(schedtypes.Holding) bool, r releaser) []schedtypes.Holding {
	t := vs.t
	var victims []schedtypes.Holding
	if eligible != nil {
		victims = vs.reclaimOrder(p, cands, eligible, r)
	} else {
		sortVictims(cands)
		for _, h := range cands {
			if t.Check(p.Quota, p.Request) == nil {
				break
			}
			r.release(h)
			victims = append(victims, h)
		}
	}
	if len(victims) == 0 || t.Check(p.Quota, p.Request) != nil {
		return nil
	}
	// Only as many as needed: a victim whose usage the request can spare stays.
	var kept []schedtypes.Holding
	for i := len(victims) - 1; i >= 0; i-- {
		r.unrelease(victims[i])
		if t.Check(p.Quota, p.Request) != nil {
			r.release(victims[i])
			kept = append(kept, victims[i])
		}
	}
	slices.Reverse(kept)
	return kept
}

// sortVictims orders the candidates of one quota: lowest priority first,
// then most recently admitted.
func sortVictims(cands []schedtypes.Holding) {
	slices.SortStableFunc(cands, func(a, b schedtypes.Holding) int {
		if a.Priority != b.Priority {
			if a.Priority < b.Priority {
				return -1
			}
			return 1
		}
		if c := b.AllocatedAt.Compare(a.AllocatedAt); c != 0 {
			return c
		}
		// Admission times have second precision; break ties the same way each time.
		return strings.Compare(string(b.Key), string(a.Key))
	})
}

// reclaimOrder releases candidates until the request fits: each time the
// next unit (in sortVictims order) of the quota that borrows most, by Share
// (how far above its min it is, relative to its weight or max; ties by
// name), among the quotas still eligible. A quota back within its min gives
// nothing more. It returns the units released.
func (vs *VictimSelector) reclaimOrder(p Preemption, cands []schedtypes.Holding, eligible func(schedtypes.Holding) bool, r releaser) []schedtypes.Holding {
	t := vs.t
	byQuota := map[schedtypes.QuotaName][]schedtypes.Holding{}
	for _, h := range cands {
		byQuota[h.Quota] = append(byQuota[h.Quota], h)
	}
	for _, hs := range byQuota {
		sortVictims(hs)
	}
	var victims []schedtypes.Holding
	for t.Check(p.Quota, p.Request) != nil {
		var pick schedtypes.QuotaName
		var most float64
		for q, hs := range byQuota {
			for len(hs) > 0 && !eligible(hs[0]) {
				hs = hs[1:]
			}
			byQuota[q] = hs
			if len(hs) == 0 {
				continue
			}
			if s := t.Share(q); pick == "" || s > most || (s == most && q < pick) {
				pick, most = q, s
			}
		}
		if pick == "" {
			break
		}
		h := byQuota[pick][0]
		byQuota[pick] = byQuota[pick][1:]
		r.release(h)
		victims = append(victims, h)
	}
	return victims
}

// CouldReclaim reports whether a unit of quota name asking req would be
// allowed to reclaim now: it is short of some resource and within its min
// of each it is short of.
func (vs *VictimSelector) CouldReclaim(name schedtypes.QuotaName, req schedtypes.Resources) bool {
	short := vs.short(name, req)
	return len(short) > 0 && vs.t.withinMin(name, short)
}

// short is the part of req that does not fit quota name now: each resource
// of req that, asked for alone, would not fit.
func (vs *VictimSelector) short(name schedtypes.QuotaName, req schedtypes.Resources) schedtypes.Resources {
	t := vs.t
	var out schedtypes.Resources
	for r, v := range req {
		if v > 0 && t.Check(name, schedtypes.Resources{r: v}) != nil {
			if out == nil {
				out = schedtypes.Resources{}
			}
			out[r] = v
		}
	}
	return out
}

// overMin reports whether quota name uses more than its min of a resource
// that req asks for: it borrows what req needs.
func (vs *VictimSelector) overMin(name schedtypes.QuotaName, req schedtypes.Resources) bool {
	t := vs.t
	n, ok := t.nodes[name]
	if !ok {
		return false
	}
	for r, v := range req {
		if v > 0 && n.used[r] > n.spec.Min[r] {
			return true
		}
	}
	return false
}
