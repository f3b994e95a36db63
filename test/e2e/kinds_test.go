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

package e2e

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

var (
	tfJobGVK      = schema.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "TFJob"}
	pytorchJobGVK = schema.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "PyTorchJob"}
	workflowGVK   = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Workflow"}
)

// TestKubeflowExamples submits the guide's TFJob and PyTorchJob examples. The
// guide gives them no metadata.name (the API server needs one), so the test
// adds a name and namespace and changes nothing else. Both are charged to
// team-a-queue, which does not exist at first: the extensions take them over
// (a QueueUnit <name>-<extension> exists), they stay suspended, and the unit
// reports QueueNotFound; once an ElasticQuota team-a-queue appears they are
// admitted and released (spec.runPolicy.suspend false).
func TestKubeflowExamples(t *testing.T) {
	jobs := []struct {
		file, name, unit string
		gvk              schema.GroupVersionKind
	}{
		{"tfjob.yaml", "tfjob-example", "tfjob-example-tfjob", tfJobGVK},
		{"pytorchjob.yaml", "pytorchjob-example", "pytorchjob-example-pytorchjob", pytorchJobGVK},
	}
	for _, j := range jobs {
		objs := readGuide(t, j.file)
		if len(objs) != 1 || objs[0].GroupVersionKind() != j.gvk {
			t.Fatalf("%s: want one %s, got %d objects", j.file, j.gvk.Kind, len(objs))
		}
		u := objs[0]
		u.SetName(j.name) // the guide's example has none
		u.SetNamespace("default")
		create(t, u)
	}
	for _, j := range jobs {
		eventually(t, "QueueUnit "+j.unit+" taken over and waiting for queue team-a-queue", func(ctx context.Context) (bool, error) {
			qu, err := queueUnit(ctx, "default", j.unit)
			if err != nil {
				return false, err
			}
			if qu.Spec.ConsumerRef == nil || qu.Spec.ConsumerRef.Kind != j.gvk.Kind || qu.Spec.ConsumerRef.Name != j.name {
				return false, fmt.Errorf("consumerRef %+v", qu.Spec.ConsumerRef)
			}
			if admitted(qu.Status.Phase) {
				t.Fatalf("%s admitted without quota team-a-queue", j.unit)
			}
			return hasEvent(ctx, "default", j.unit, "QueueNotFound")
		})
		suspended, found, err := nestedBool(ctx(t), j.gvk, "default", j.name, "spec", "runPolicy", "suspend")
		if err != nil || !found || !suspended {
			t.Errorf("%s released before admission: runPolicy.suspend %v (found %v, err %v)", j.name, suspended, found, err)
		}
	}

	elasticQuota(t, "team-a-queue", "10", "20Gi", nil)
	for _, j := range jobs {
		waitPhase(t, "default", j.unit, "dequeued once its queue exists", admitted)
		eventually(t, j.name+" released (spec.runPolicy.suspend false)", func(ctx context.Context) (bool, error) {
			suspended, _, err := nestedBool(ctx, j.gvk, "default", j.name, "spec", "runPolicy", "suspend")
			return err == nil && !suspended, err
		})
	}
}

// TestWorkflowExample submits the guide's Argo Workflow as written. It has no
// quota label, but the guide says a workflow with a koord-queue-suspend
// template is managed, so the extension takes it over (a QueueUnit
// my-workflow-workflow exists) and holds it; with no quota to charge it is
// not admitted and its unit says why. The same workflow with a quota label
// (only that added, and another name) is taken over, held, and released
// (spec.suspend no longer true) on admission.
func TestWorkflowExample(t *testing.T) {
	applyGuide(t, "workflow.yaml")
	eventually(t, "QueueUnit my-workflow-workflow of the workflow as written", func(ctx context.Context) (bool, error) {
		qu, err := queueUnit(ctx, "default", "my-workflow-workflow")
		if err != nil {
			return false, err
		}
		if qu.Spec.ConsumerRef == nil || qu.Spec.ConsumerRef.Kind != "Workflow" || qu.Spec.ConsumerRef.Name != "my-workflow" {
			return false, fmt.Errorf("consumerRef %+v", qu.Spec.ConsumerRef)
		}
		if qu.Status.Message == "" {
			return false, fmt.Errorf("phase %q, no message yet", qu.Status.Phase)
		}
		t.Logf("my-workflow-workflow: phase %q, message %q", qu.Status.Phase, qu.Status.Message)
		return true, nil
	})

	objs := readGuide(t, "workflow.yaml")
	labelled := objs[0]
	labelled.SetName("my-workflow-quota")
	labelled.SetNamespace("default")
	labelled.SetLabels(map[string]string{schedv1alpha1.QuotaNameLabel: "team-wf"})
	elasticQuota(t, "team-wf", "10", "20Gi", nil)
	create(t, labelled)
	eventually(t, "QueueUnit my-workflow-quota-workflow", func(ctx context.Context) (bool, error) {
		qu, err := queueUnit(ctx, "default", "my-workflow-quota-workflow")
		if err != nil {
			return false, err
		}
		if qu.Spec.ConsumerRef == nil || qu.Spec.ConsumerRef.Kind != "Workflow" {
			return false, fmt.Errorf("consumerRef %+v", qu.Spec.ConsumerRef)
		}
		return true, nil
	})
	waitPhase(t, "default", "my-workflow-quota-workflow", "dequeued", admitted)
	eventually(t, "my-workflow-quota released (spec.suspend no longer true)", func(ctx context.Context) (bool, error) {
		suspended, _, err := nestedBool(ctx, workflowGVK, "default", "my-workflow-quota", "spec", "suspend")
		return err == nil && !suspended, err
	})

	// Meanwhile the one without a quota is still held and not admitted.
	if p, err := phaseOf(ctx(t), "default", "my-workflow-workflow"); err != nil || admitted(p) {
		t.Errorf("my-workflow (no quota label) admitted: phase %q, err %v", p, err)
	}
	suspended, _, err := nestedBool(ctx(t), workflowGVK, "default", "my-workflow", "spec", "suspend")
	if err != nil || !suspended {
		t.Errorf("my-workflow (no quota label) released: suspend %v, err %v", suspended, err)
	}
}

// TestJobWithoutQuotaLabelIsLeftAlone: a suspended Job with no quota label gets
// no QueueUnit and stays suspended.
func TestJobWithoutQuotaLabelIsLeftAlone(t *testing.T) {
	// A managed job created after it proves the extension is watching.
	create(t, suspendedJob("no-quota-label", "", "1", 0))
	elasticQuota(t, "team-witness", "10", "20Gi", nil)
	create(t, suspendedJob("witness", "team-witness", "1", 0))
	waitPhase(t, "default", "witness", "dequeued", admitted)

	absent(t, "QueueUnit no-quota-label", &schedv1alpha1.QueueUnit{}, "default", "no-quota-label")
	if s, err := jobSuspended(ctx(t), "default", "no-quota-label"); err != nil || !s {
		t.Errorf("no-quota-label released: suspended %v, err %v", s, err)
	}
	if ok, err := hasEvent(ctx(t), "default", "no-quota-label", "QueueNotFound"); err != nil || ok {
		t.Errorf("no-quota-label got a QueueNotFound event (err %v)", err)
	}
}
