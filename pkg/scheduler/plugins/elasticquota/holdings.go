package elasticquota

import (
	"github.com/koordinator-sh/koord-queue/pkg/quota"
)

// cohortHoldingsLocked lists, by quota, what the units of cohort hold, but
// for unit self and the units skip refuses: the candidates of a victim
// search. It walks the quotas of the cohort only, not every quota. It runs
// under p.mu.
func (p *Plugin) cohortHoldingsLocked(cohort quota.CohortName, self quota.UnitKey, skip func(quota.UnitKey) bool) map[quota.QuotaName][]quota.Holding {
	held := map[quota.QuotaName][]quota.Holding{}
	p.tree.EachInCohort(cohort, func(q quota.QuotaName) {
		for key := range p.byQuota[q] {
			if key != self && (skip == nil || !skip(key)) {
				held[q] = append(held[q], p.charged[key])
			}
		}
	})
	return held
}

// sameCharge reports whether b charges what a charges and looks the same
// to a victim search: recording it again changes nothing, so the searches
// that found nobody to evict stay true.
func sameCharge(a, b quota.Holding) bool {
	return a.Quota == b.Quota && a.Used.Equal(b.Used) && a.Priority == b.Priority &&
		a.AllocatedAt.Equal(b.AllocatedAt) && a.Evicting == b.Evicting
}
