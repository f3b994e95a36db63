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

package jobext

import (
	"context"
	"testing"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/job"
)

// TestUserEditsOfActiveAndBudgetSurvive: a user's kubectl patch of a unit's
// spec.active and spec.maximumExecutionTimeSeconds stays through a resync of
// the job, and the unit follows the job's own annotations once they change.
func TestUserEditsOfActiveAndBudgetSurvive(t *testing.T) {
	c, ns := startManager(t, []string{job.Name}, func(o *appOptions) {
		o.FeatureGates = "QueueUnitActive=true,MaximumExecutionTime=true"
	})
	ctx := context.Background()
	j := batchJob(ns, "edited", true, map[string]string{schedv1alpha1.QuotaNameLabel: quota})
	j.Annotations = map[string]string{schedv1alpha1.MaxExecTimeSecondsAnnotation: "600"}
	if err := c.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	u := waitUnit(t, c, ns, "edited", "queue unit", anyUnit)
	if u.Spec.Active != nil || ptr.Deref(u.Spec.MaximumExecutionTimeSeconds, 0) != 600 {
		t.Fatalf("new unit: active=%v maximumExecutionTimeSeconds=%v, want nil 600", u.Spec.Active, u.Spec.MaximumExecutionTimeSeconds)
	}
	enqueue(t, c, ns, "edited")

	// kubectl patch queueunit edited --type=merge -p '{"spec":{"active":false,"maximumExecutionTimeSeconds":60}}'
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"active":false,"maximumExecutionTimeSeconds":60}}`))
	if err := c.Patch(ctx, u, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, "unrelated job label", func(ctx context.Context) (bool, error) {
		cur := getJob(t, c, ns, "edited")
		cur.Labels["unrelated"] = "x"
		return true, c.Update(ctx, cur)
	})
	u = waitUnit(t, c, ns, "edited", "label copied", func(u *schedv1alpha1.QueueUnit) bool { return u.Labels["unrelated"] == "x" })
	if !ptr.Equal(u.Spec.Active, ptr.To(false)) || !ptr.Equal(u.Spec.MaximumExecutionTimeSeconds, ptr.To[int32](60)) {
		t.Errorf("user's edits reverted by a resync: active=%v maximumExecutionTimeSeconds=%v, want false 60",
			ptrVal(u.Spec.Active), ptrVal(u.Spec.MaximumExecutionTimeSeconds))
	}

	// The job's own annotations change: the unit follows them.
	eventually(t, "job annotations", func(ctx context.Context) (bool, error) {
		cur := getJob(t, c, ns, "edited")
		cur.Annotations[schedv1alpha1.ActiveAnnotation] = "true"
		cur.Annotations[schedv1alpha1.MaxExecTimeSecondsAnnotation] = "900"
		return true, c.Update(ctx, cur)
	})
	u = waitUnit(t, c, ns, "edited", "unit follows the job's annotations", func(u *schedv1alpha1.QueueUnit) bool {
		return ptr.Equal(u.Spec.Active, ptr.To(true)) && ptr.Equal(u.Spec.MaximumExecutionTimeSeconds, ptr.To[int32](900))
	})
	if u.Annotations[framework.JobActiveAnnotation] != "true" || u.Annotations[framework.JobMaxExecTimeAnnotation] != "900" {
		t.Errorf("recorded job values: %v", u.Annotations)
	}
}

func ptrVal[T any](p *T) any {
	if p == nil {
		return "nil"
	}
	return *p
}
