// Package quota owns the ElasticQuota tree and its usage accounting, as pure
// logic with no client: quotas with min and max, parent links (a quota without
// one is a child of the root, koordinator-root-quota), and what admitted units
// use. A unit is charged to its leaf quota and every ancestor; it fits when, at
// each of them, used + request <= max x oversell for every resource that
// quota's max names. CPU is counted in milli-units, everything else in units.
//
// A Tree is not safe for concurrent use; its owner (the ElasticQuotaV2 plugin)
// guards it with one lock.
package quota
