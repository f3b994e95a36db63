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

package workflow

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

var cmpQuantities = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func wf(obj map[string]any) *Workflow { return Wrap(&unstructured.Unstructured{Object: obj}) }

func suspendTemplate() map[string]any {
	return map[string]any{"name": SuspendTemplate, "suspend": map[string]any{}}
}

func TestMinResources(t *testing.T) {
	want := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5"), corev1.ResourceMemory: resource.MustParse("5Gi")}
	for name, ann := range map[string]string{
		"yaml": "cpu: 5\nmemory: 5Gi\n",
		"json": `{"cpu": "5", "memory": "5Gi"}`,
	} {
		w := wf(map[string]any{"metadata": map[string]any{"annotations": map[string]any{MinResourcesAnnotation: ann}}})
		sets, err := w.PodSets()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(want, framework.TotalRequests(sets), cmpQuantities); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	bad := wf(map[string]any{"metadata": map[string]any{"annotations": map[string]any{MinResourcesAnnotation: "cpu: [1"}}})
	if _, err := bad.PodSets(); err == nil {
		t.Error("broken annotation accepted")
	}
}

func TestOptsIn(t *testing.T) {
	cases := map[string]struct {
		obj  map[string]any
		want bool
	}{
		"template":                       {map[string]any{"spec": map[string]any{"templates": []any{suspendTemplate()}}}, true},
		"stored template":                {map[string]any{"status": map[string]any{"storedTemplates": map[string]any{"namespaced/x/" + SuspendTemplate: suspendTemplate()}}}, true},
		"template without suspend field": {map[string]any{"spec": map[string]any{"suspend": true, "templates": []any{map[string]any{"name": SuspendTemplate}}}}, false},
		"suspended, no template":         {map[string]any{"spec": map[string]any{"suspend": true}}, false},
	}
	for name, tc := range cases {
		if got := wf(tc.obj).OptsIn(); got != tc.want {
			t.Errorf("%s: OptsIn = %v, want %v", name, got, tc.want)
		}
	}
}

func TestResume(t *testing.T) {
	w := wf(map[string]any{
		"spec": map[string]any{"suspend": true, "templates": []any{suspendTemplate()}},
		"status": map[string]any{"nodes": map[string]any{
			"n1": map[string]any{"type": "Suspend", "phase": "Running", "templateName": SuspendTemplate},
			"n2": map[string]any{"type": "Suspend", "phase": "Running", "templateName": "user-approval"},
		}},
	})
	if !w.IsSuspended() {
		t.Fatal("not suspended")
	}
	w.Resume()
	if w.IsSuspended() {
		t.Error("still suspended after Resume")
	}
	nodes, _, _ := unstructured.NestedMap(w.u.Object, "status", "nodes")
	if nodes["n1"].(map[string]any)["phase"] != "Succeeded" || nodes["n2"].(map[string]any)["phase"] != "Running" {
		t.Errorf("nodes after Resume: %v", nodes)
	}
}
