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
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// EachInCohort visits exactly the quotas whose Cohort is the one asked,
// compared with Cohort over every quota of the tree.
func TestEachInCohortMatchesCohort(t *testing.T) {
	tr := New(1)
	for _, s := range []Spec{
		{Name: "p1", Max: schedtypes.Resources{"cpu": 10}},
		{Name: "p2", Max: schedtypes.Resources{"cpu": 10}},
		{Name: "c1", Parent: "p1"}, {Name: "c2", Parent: "p1"}, {Name: "g1", Parent: "c1"},
		{Name: "c3", Parent: "p2"},
		// A child of a parent nobody defined: a placeholder heads its cohort.
		{Name: "c4", Parent: "ghost"},
	} {
		if err := tr.Upsert(s); err != nil {
			t.Fatal(err)
		}
	}
	all := []schedtypes.QuotaName{"p1", "p2", "c1", "c2", "g1", "c3", "c4", "ghost", "unknown"}
	for _, cohort := range []schedtypes.CohortName{"p1", "p2", "ghost", "unknown", "c1"} {
		var want, got []schedtypes.QuotaName
		for _, q := range all {
			if tr.Cohort(q) == cohort {
				want = append(want, q)
			}
		}
		tr.EachInCohort(cohort, func(q schedtypes.QuotaName) { got = append(got, q) })
		slices.Sort(want)
		slices.Sort(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("cohort %s (-want +got):\n%s", cohort, diff)
		}
	}
}
