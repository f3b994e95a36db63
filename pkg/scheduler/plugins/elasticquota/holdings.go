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
	"maps"
	"slices"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// cohortHoldingsLocked lists, by quota, what the units of cohort hold, but
// for unit self and the units skip refuses: the candidates of a victim
// search. It walks the quotas of the cohort only, not every quota, and
// keeps the list until the tree's shape or the cohort's holdings change:
// after a release every queue of the cohort is tried, and their searches
// share it.
// The answer is read only. It runs under p.mu.
func (p *Plugin) cohortHoldingsLocked(cohort schedtypes.CohortName, self schedtypes.UnitKey, skip func(schedtypes.UnitKey) bool) map[schedtypes.QuotaName][]schedtypes.Holding {
	c, ok := p.heldByCohort[cohort]
	if !ok || c.shape != p.tree.ShapeVersion() || c.version != p.versions[cohort] {
		c = cohortHeld{shape: p.tree.ShapeVersion(), version: p.versions[cohort], held: map[schedtypes.QuotaName][]schedtypes.Holding{}}
		p.tree.EachInCohort(cohort, func(q schedtypes.QuotaName) {
			for key := range p.byQuota[q] {
				c.held[q] = append(c.held[q], p.charged[key])
			}
		})
		if p.heldByCohort == nil {
			p.heldByCohort = map[schedtypes.CohortName]cohortHeld{}
		}
		p.heldByCohort[cohort] = c
	}
	left := func(key schedtypes.UnitKey) bool {
		_, gone := p.gone[key]
		return key == self || gone || (skip != nil && skip(key))
	}
	var out map[schedtypes.QuotaName][]schedtypes.Holding
	for q, hs := range c.held {
		if !slices.ContainsFunc(hs, func(h schedtypes.Holding) bool { return left(h.Key) }) {
			continue
		}
		if out == nil {
			// Copied only when someone is left out, and only the lists
			// that lose someone.
			out = maps.Clone(c.held)
		}
		kept := make([]schedtypes.Holding, 0, len(hs))
		for _, h := range hs {
			if !left(h.Key) {
				kept = append(kept, h)
			}
		}
		out[q] = kept
	}
	if out == nil {
		return c.held
	}
	return out
}

// cohortHeld is the holdings of a cohort, by quota, as of a shape of the
// tree and a version of the cohort (a search simulates evictions on the
// tree and so moves its usage version; its shape stays).
type cohortHeld struct {
	shape, version uint64
	held           map[schedtypes.QuotaName][]schedtypes.Holding
}

// sameCharge reports whether b charges what a charges and looks the same
// to a victim search: recording it again changes nothing, so the searches
// that found nobody to evict stay true.
func sameCharge(a, b schedtypes.Holding) bool {
	return a.Quota == b.Quota && a.Used.Equal(b.Used) && a.Priority == b.Priority &&
		a.AllocatedAt.Equal(b.AllocatedAt) && a.Evicting == b.Evicting
}
