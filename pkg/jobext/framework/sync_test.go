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
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/features"
)

// TestUserEditsSurvive checks that a user's spec.active and
// spec.maximumExecutionTimeSeconds stay through a resync of the job, and that
// the unit follows the job's own annotations once they change.
func TestUserEditsSurvive(t *testing.T) {
	sets := onePodSet()
	job := newFakeJob("j", map[string]string{schedv1alpha1.QuotaNameLabel: "q"},
		map[string]string{schedv1alpha1.MaxExecTimeSecondsAnnotation: "600"}, sets)
	ext := fakeExtension(sets, JobStatus{})
	c := fakeClient(job.cm)
	gates := features.Gates{QueueUnitActive: true, MaximumExecutionTime: true}
	r := NewReconciler(c, ext, events.NewFakeRecorder(100), clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), ReconcilerOptions{Gates: gates})
	ctx := context.Background()
	reconcileAndGet := func() *schedv1alpha1.QueueUnit {
		t.Helper()
		reconcileJob(t, r, "ns")
		u, err := storedUnit(c, "ns")
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	changeJob := func(change func(*corev1.ConfigMap)) {
		t.Helper()
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(job.cm), cm); err != nil {
			t.Fatal(err)
		}
		change(cm)
		if err := c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	check := func(u *schedv1alpha1.QueueUnit, what string, active *bool, maxExec *int32) {
		t.Helper()
		if !ptr.Equal(u.Spec.Active, active) || !ptr.Equal(u.Spec.MaximumExecutionTimeSeconds, maxExec) {
			t.Errorf("%s: active=%v maximumExecutionTimeSeconds=%v, want %v %v", what,
				ptrString(u.Spec.Active), ptrString(u.Spec.MaximumExecutionTimeSeconds), ptrString(active), ptrString(maxExec))
		}
	}

	u := reconcileAndGet()
	check(u, "created", nil, ptr.To[int32](600))

	// The user deactivates the unit and shortens its budget.
	u.Spec.Active = ptr.To(false)
	u.Spec.MaximumExecutionTimeSeconds = ptr.To[int32](60)
	if err := c.Update(ctx, u); err != nil {
		t.Fatal(err)
	}
	changeJob(func(cm *corev1.ConfigMap) { cm.Labels["unrelated"] = "x" })
	u = reconcileAndGet()
	if u.Labels["unrelated"] != "x" {
		t.Fatalf("job not synced: labels %v", u.Labels)
	}
	check(u, "after a resync", ptr.To(false), ptr.To[int32](60))

	// The job's own annotations change: the unit follows.
	changeJob(func(cm *corev1.ConfigMap) {
		cm.Annotations[schedv1alpha1.ActiveAnnotation] = "true"
		cm.Annotations[schedv1alpha1.MaxExecTimeSecondsAnnotation] = "900"
	})
	u = reconcileAndGet()
	check(u, "after the job's annotations changed", ptr.To(true), ptr.To[int32](900))
	if u.Annotations[JobActiveAnnotation] != "true" || u.Annotations[JobMaxExecTimeAnnotation] != "900" {
		t.Errorf("recorded job values: %v", u.Annotations)
	}
}

func ptrString[T any](p *T) any {
	if p == nil {
		return "nil"
	}
	return *p
}
