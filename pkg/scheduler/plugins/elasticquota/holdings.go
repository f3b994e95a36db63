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

package elasticquota

import (
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// cohortHoldingsLocked lists, by quota, what the units of cohort hold: the
// candidates of a victim search. It walks the quotas of the cohort only, not
// every quota, and keeps the list until the tree's shape or the cohort's
// holdings change: after a release every queue of the cohort is tried, and
// their searches share it (each leaves out its own units with
// quota.Preemption.Leave, see leaveLocked). When the cohort changed, only
// the lists of quotas whose holdings changed (p.listed) are built again: a
// release in a cohort of 100 quotas rebuilds one list, not 100. The answer
// is read only, until p.mu is released. It runs under p.mu.
func (p *Plugin) cohortHoldingsLocked(cohort schedtypes.CohortName) map[schedtypes.QuotaName][]schedtypes.Holding {
	shape, version := p.tree.ShapeVersion(), p.versions[cohort]
	c, ok := p.heldByCohort[cohort]
	if ok && c.shape == shape && c.version == version {
		return c.held
	}
	if !ok || c.shape != shape {
		c = cohortHeld{held: map[schedtypes.QuotaName][]schedtypes.Holding{}, listed: map[schedtypes.QuotaName]uint64{},
			evicting: map[schedtypes.QuotaName][]schedtypes.Holding{}, lower: map[lowerKey]schedtypes.Resources{}}
	} else {
		clear(c.lower)
	}
	c.shape, c.version = shape, version
	p.tree.EachInCohort(cohort, func(q schedtypes.QuotaName) {
		n, built := c.listed[q]
		if built && n == p.listed[q] {
			return
		}
		c.listed[q] = p.listed[q]
		hs := make([]schedtypes.Holding, 0, len(p.byQuota[q]))
		var out []schedtypes.Holding
		for key := range p.byQuota[q] {
			h := p.charged[key]
			hs = append(hs, h)
			if h.Evicting {
				out = append(out, h)
			}
		}
		if len(out) == 0 {
			delete(c.evicting, q)
		} else {
			c.evicting[q] = out
		}
		if len(hs) == 0 {
			delete(c.held, q)
			return
		}
		c.held[q] = hs
	})
	if p.heldByCohort == nil {
		p.heldByCohort = map[schedtypes.CohortName]cohortHeld{}
	}
	p.heldByCohort[cohort] = c
	return c.held
}

// cohortEvictingLocked are the units of cohort on their way out, after
// cohortHoldingsLocked for cohort. It runs under p.mu.
func (p *Plugin) cohortEvictingLocked(cohort schedtypes.CohortName) []schedtypes.Holding {
	var out []schedtypes.Holding
	for _, hs := range p.heldByCohort[cohort].evicting {
		out = append(out, hs...)
	}
	return out
}

// leaveLocked is who a victim search for unit self leaves out: itself, the
// units known to be gone, and those skip refuses; partial becomes true when
// skip left out a candidate (Victims.Partial). It runs under p.mu.
func (p *Plugin) leaveLocked(self schedtypes.UnitKey, skip func(schedtypes.UnitKey) bool) (leave func(schedtypes.UnitKey) bool, partial *bool) {
	partial = new(bool)
	return func(key schedtypes.UnitKey) bool {
		if _, gone := p.gone[key]; key == self || gone {
			return true
		}
		if skip != nil && skip(key) {
			*partial = true
			return true
		}
		return false
	}, partial
}

// cohortHeld is the holdings of a cohort, by quota, as of a shape of the
// tree and a version of the cohort (a search simulates evictions on the
// tree and so moves its usage version; its shape stays).
type cohortHeld struct {
	shape, version uint64
	held           map[schedtypes.QuotaName][]schedtypes.Holding
	// listed is p.listed of each quota of the cohort when its list in
	// held was built.
	listed map[schedtypes.QuotaName]uint64
	// evicting are the units of held on their way out, by quota (none:
	// no entry).
	evicting map[schedtypes.QuotaName][]schedtypes.Holding
	// lower are the sums of lowerUnderLocked.
	lower map[lowerKey]schedtypes.Resources
}

// sameCharge reports whether b charges what a charges and looks the same
// to a victim search: recording it again changes nothing, so the searches
// that found nobody to evict stay true.
func sameCharge(a, b schedtypes.Holding) bool {
	return a.Quota == b.Quota && a.Used.Equal(b.Used) && a.Priority == b.Priority &&
		a.AllocatedAt.Equal(b.AllocatedAt) && a.Evicting == b.Evicting
}

// lowerUnderLocked is what the units of cohort holding quota at or below
// quota under, at a priority below priority, hold together, but for unit
// self: what evicting them could give back there (Victims.Reachable). The
// sums are kept with the cohort's holdings, by quota and priority, so the
// searches of every queue of a cohort after a release sum each ancestor
// once, not once per search. Units whose admission is being written count:
// they will hold, and may be evicted then. It runs under p.mu, after
// cohortHoldingsLocked for cohort.
func (p *Plugin) lowerUnderLocked(cohort schedtypes.CohortName, under schedtypes.QuotaName, priority int32, self schedtypes.UnitKey) schedtypes.Resources {
	c := p.heldByCohort[cohort]
	k := lowerKey{under: under, priority: priority}
	sum, ok := c.lower[k]
	if !ok {
		add := func(hs []schedtypes.Holding) {
			for _, h := range hs {
				if h.Priority < priority {
					sum = sum.Add(h.Used)
				}
			}
		}
		if p.tree.Leaf(under) {
			// Only its own holdings: no walk of the cohort's quotas.
			add(c.held[under])
		} else {
			for q, hs := range c.held {
				if p.tree.Under(q, under) {
					add(hs)
				}
			}
		}
		c.lower[k] = sum
	}
	if h, held := p.charged[self]; held && h.Priority < priority && p.tree.Under(h.Quota, under) {
		sum = sum.Clone().Sub(h.Used)
	}
	return sum
}

// lowerKey names a sum of lowerUnderLocked.
type lowerKey struct {
	under    schedtypes.QuotaName
	priority int32
}
