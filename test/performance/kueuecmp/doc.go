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
