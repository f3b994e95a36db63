// Package elasticquota is the ElasticQuotaV2 plugin. It owns the quota tree
// (pkg/quota) built from Koordinator ElasticQuotas and the usage charged to
// it, maps each unit to its queue and quota, admits a unit only when it fits
// its quota and every ancestor, and keeps one Queue per ElasticQuota in
// namespace koord-queue (same name, priority 1000, policy from the
// koord-queue/queue-policy label, koord-queue/* annotations copied).
//
// Its settings are its own arguments, configv1.ElasticQuotaArgs: sharedQuotas
// (tenancy), oversellRate (the factor on every max) and
// reclaimProtectionPeriod; the scheduler app fills the last two from the
// --oversellrate flag and the top-level reclaimProtectionPeriod when unset.
package elasticquota
