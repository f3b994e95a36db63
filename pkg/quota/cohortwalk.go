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

import "github.com/koordinator-sh/koord-queue/pkg/schedtypes"

// EachInCohort calls fn with every quota of cohort (the top-level quota and
// everything under it, placeholders included): the quotas q for which
// Cohort(q) is cohort. It costs the size of the cohort, not of the tree.
func (t *Tree) EachInCohort(cohort schedtypes.CohortName, fn func(name schedtypes.QuotaName)) {
	n, ok := t.nodes[schedtypes.QuotaName(cohort)]
	if !ok || n == t.root {
		// Cohort of a quota the tree does not know is its own name.
		fn(schedtypes.QuotaName(cohort))
		return
	}
	if n.parent != nil && n.parent != t.root {
		// Not a top-level quota: the cohort of no quota.
		return
	}
	var walk func(n *node)
	walk = func(n *node) {
		fn(n.spec.Name)
		for _, c := range n.children {
			walk(c)
		}
	}
	walk(n)
}

// ShapeVersion counts the changes of the tree's shape (quotas defined,
// changed, moved or deleted), not of its usage: equal versions mean every
// quota is in the same cohort.
func (t *Tree) ShapeVersion() uint64 { return t.shape }
