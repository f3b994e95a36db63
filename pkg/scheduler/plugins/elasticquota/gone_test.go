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
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// A unit deleted while pods naming it are there (its finalizer stripped)
// keeps its whole charge, the pods not bound yet included, until the last
// pod goes; a unit made again under its name that only waits does not
// release it; a deleted unit without pods gives its quota back at once.
func TestDeletedUnitKeepsChargeUntilItsPodsGo(t *testing.T) {
	p, h := newTestPlugin(t, nil, twoTeams()...)
	u := unit("job", "team-a", 0, 4)
	p.SetUsage(u.Key, holding(u, time.Time{}))
	labels := map[string]string{schedv1alpha1.QuotaNameLabel: "team-a", schedv1alpha1.QueueUnitLabel: "job"}
	feedPod(t, p, runningPod("default", "job-0", "2", labels))
	unbound := runningPod("default", "job-1", "2", labels)
	unbound.Spec.NodeName, unbound.Status.Phase = "", corev1.PodPending
	feedPod(t, p, unbound)
	h.takeFreed()

	p.UnitGone(u.Key)
	if got := usedCPU(t, p, "team-a"); got != 4000 {
		t.Fatalf("team-a uses %dm CPU after its unit was deleted beside its pods, want the unit's 4000m", got)
	}
	// The extension makes the unit again at once; it waits.
	p.SetUsage(u.Key, nil)
	if got := usedCPU(t, p, "team-a"); got != 4000 {
		t.Errorf("team-a uses %dm CPU once the unit was made again, waiting, want 4000m", got)
	}
	if v := p.Preempt(t.Context(), unit("claimer", "team-a", 10, 4), true, true, nil); slices.ContainsFunc(v.Units, func(h schedtypes.Holding) bool { return h.Key == u.Key }) {
		t.Errorf("the deleted unit was chosen as a victim: %+v", v.Units)
	}
	p.onPodDelete(runningPod("default", "job-0", "2", labels))
	if got := usedCPU(t, p, "team-a"); got != 4000 {
		t.Errorf("team-a uses %dm CPU with one pod of the deleted unit left, want 4000m", got)
	}
	if freed := h.takeFreed(); len(freed) != 0 {
		t.Errorf("room freed in %v while a pod of the deleted unit is left", freed)
	}
	h.takeNotes()
	p.onPodDelete(unbound)
	if got := usedCPU(t, p, "team-a"); got != 0 {
		t.Errorf("team-a uses %dm CPU once every pod of the deleted unit is gone, want 0", got)
	}
	// The room is told in its amount, as any release, and not once more
	// as room of an amount nobody counted (that would wake every unit of
	// the cohort, whatever it lacks).
	room, _ := h.takeNotes()
	if diff := cmp.Diff([]roomFreed{{"org", cpu(4)}}, room, cmp.AllowUnexported(roomFreed{})); diff != "" {
		t.Errorf("room given back when the last pod of the deleted unit went (-want +got):\n%s", diff)
	}
	if freed := h.takeFreed(); len(freed) != 1 {
		t.Errorf("room freed in %v when the last pod of the deleted unit went, want once in org, counted", freed)
	}

	// No pods: the charge goes with the unit.
	other := unit("alone", "team-a", 0, 2)
	p.SetUsage(other.Key, holding(other, time.Time{}))
	p.UnitGone(other.Key)
	if got := usedCPU(t, p, "team-a"); got != 0 {
		t.Errorf("team-a uses %dm CPU after a unit without pods was deleted, want 0", got)
	}
}
