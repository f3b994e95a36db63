// Package kueuecmp sets Kueue's scheduler performance harness and ours side
// by side (make perf-compare). It owns the Kueue side: fetching Kueue's
// module at a pinned release through the Go module proxy into the tools
// cache, building its runner, minimalkueue and checker there, running them,
// and reading their outputs; the translation of our generator configs into
// Kueue's; and the comparison table (figures per run, means, ratios).
//
// Nothing of Kueue's is kept in this repository: its code is only built and
// run from the module cache.
package kueuecmp
