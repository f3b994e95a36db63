package elasticquota

import (
	"github.com/koordinator-sh/koord-queue/pkg/quota"
)

// cohortHoldingsLocked lists, by quota, what the units of cohort hold, but
// for unit self and the units skip refuses: the candidates of a victim
// search. It walks the quotas of the cohort only, not every quota, and
// keeps the list until the tree or the cohort's holdings change: after a
// release every queue of the cohort is tried, and their searches share it.
// The answer is read only. It runs under p.mu.
func (p *Plugin) cohortHoldingsLocked(cohort quota.CohortName, self quota.UnitKey, skip func(quota.UnitKey) bool) map[quota.QuotaName][]quota.Holding {
	c, ok := p.heldByCohort[cohort]
	if !ok || c.tree != p.tree.Version() || c.version != p.versions[cohort] {
		c = cohortHeld{tree: p.tree.Version(), version: p.versions[cohort], held: map[quota.QuotaName][]quota.Holding{}}
		p.tree.EachInCohort(cohort, func(q quota.QuotaName) {
			for key := range p.byQuota[q] {
				c.held[q] = append(c.held[q], p.charged[key])
			}
		})
		if p.heldByCohort == nil {
			p.heldByCohort = map[quota.CohortName]cohortHeld{}
		}
		p.heldByCohort[cohort] = c
	}
	if !leavesOut(c.held, self, skip) {
		return c.held
	}
	out := make(map[quota.QuotaName][]quota.Holding, len(c.held))
	for q, hs := range c.held {
		for _, h := range hs {
			if h.Key != self && (skip == nil || !skip(h.Key)) {
				out[q] = append(out[q], h)
			}
		}
	}
	return out
}

// leavesOut reports whether some holding of held is self's or refused by skip.
func leavesOut(held map[quota.QuotaName][]quota.Holding, self quota.UnitKey, skip func(quota.UnitKey) bool) bool {
	for _, hs := range held {
		for _, h := range hs {
			if h.Key == self || (skip != nil && skip(h.Key)) {
				return true
			}
		}
	}
	return false
}

// cohortHeld is the holdings of a cohort, by quota, as of a tree version
// and a cohort version.
type cohortHeld struct {
	tree, version uint64
	held          map[quota.QuotaName][]quota.Holding
}

// sameCharge reports whether b charges what a charges and looks the same
// to a victim search: recording it again changes nothing, so the searches
// that found nobody to evict stay true.
func sameCharge(a, b quota.Holding) bool {
	return a.Quota == b.Quota && a.Used.Equal(b.Used) && a.Priority == b.Priority &&
		a.AllocatedAt.Equal(b.AllocatedAt) && a.Evicting == b.Evicting
}
