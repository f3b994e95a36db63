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

package framework

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// Relabelling a job onto another quota reaches its unit only while the unit
// waits: an admitted unit keeps the quota it is charged to.
func TestCopyMetaKeepsQuotaOfAdmittedUnit(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
		schedv1alpha1.QuotaNameLabel: "elsewhere", "team": "blue"}}}
	for phase, want := range map[schedv1alpha1.QueueUnitPhase]string{
		schedv1alpha1.QueueUnitPhaseEnqueued:       "elsewhere",
		schedv1alpha1.QueueUnitPhaseTimeoutBackoff: "elsewhere",
		schedv1alpha1.QueueUnitPhaseReserved:       "home",
		schedv1alpha1.QueueUnitPhaseDequeued:       "home",
		schedv1alpha1.QueueUnitPhaseRunning:        "home",
	} {
		unit := &schedv1alpha1.QueueUnit{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{schedv1alpha1.QuotaNameLabel: "home"}}}
		unit.Status.Phase = phase
		copyMeta(job, unit)
		if got := unit.Labels[schedv1alpha1.QuotaNameLabel]; got != want {
			t.Errorf("%s: quota label %q, want %q", phase, got, want)
		}
		if unit.Labels["team"] != "blue" {
			t.Errorf("%s: other labels not copied: %v", phase, unit.Labels)
		}
	}
}
