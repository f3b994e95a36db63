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

package queue

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// Units taken in before their quota's parent was known carry a cohort that
// is no longer theirs. A covering refusal of the head must not leave the
// units behind it waiting on that old cohort: a release in the real cohort
// makes all of them worth trying again (found by the chaos run: two units
// stayed Enqueued after a failover while their quota emptied).
func TestInferredRefusalsWaitOnTheTriedCohort(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(4)})
	h.m = NewManager(nil)
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority})
	for _, name := range []string{"u1", "u2", "u3"} {
		h.add("q", name, "a", 1, 1) // cohort "a": the parent is not known yet
	}
	// The parent arrives and is full; the tree changed shape.
	for _, s := range []quota.Spec{{Name: "org", Max: cpu(4)}, {Name: "a", Parent: "org", Max: cpu(4)}, {Name: "b", Parent: "org", Max: cpu(4)}} {
		if err := h.tree.Upsert(s); err != nil {
			t.Fatal(err)
		}
	}
	h.tree.Charge("b", cpu(4))
	h.m.Invalidate()
	try := func(u *schedtypes.Unit, s Settings) *schedtypes.Failure {
		u.Cohort = h.tree.Cohort(u.Quota) // as the scheduler's try does
		f := h.try(u, s)
		if f != nil {
			f.Covering = true
		}
		return f
	}
	if got := h.m.Pass(try).Admitted; len(got) != 0 {
		t.Fatalf("admitted %d units into a full parent", len(got))
	}
	if diff := cmp.Diff([]string{"u1"}, h.tries); diff != "" {
		t.Fatalf("tried while full (-want +got):\n%s", diff)
	}

	// b's units end: the cohort of org has room for all three.
	h.tree.Release("b", cpu(4))
	h.m.Freed(h.tree.Cohort("b"))
	var admitted []string
	for _, a := range h.m.Pass(try).Admitted {
		admitted = append(admitted, a.Unit.Name)
	}
	if diff := cmp.Diff([]string{"u1", "u2", "u3"}, admitted); diff != "" {
		t.Errorf("admitted after the release (-want +got):\n%s", diff)
	}
}
