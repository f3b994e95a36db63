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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestTyped: the extension Typed completes makes empty jobs of its type,
// wraps only that type, and names both types when handed another.
func TestTyped(t *testing.T) {
	var wrapped *corev1.ConfigMap
	ext := Typed(Extension{Name: "fake", GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")},
		func(cm *corev1.ConfigMap) *fakeJob { wrapped = cm; return &fakeJob{cm: cm} })
	obj := ext.NewObject()
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok || cm.Name != "" {
		t.Fatalf("NewObject = %#v, want an empty *ConfigMap", obj)
	}
	if ext.NewObject() == obj {
		t.Error("NewObject returned the same object twice")
	}
	gj, err := ext.Wrap(cm)
	if err != nil || gj.Object() != client.Object(cm) || wrapped != cm {
		t.Errorf("Wrap(ConfigMap) = %v, %v; want the ConfigMap wrapped", gj, err)
	}
	_, err = ext.Wrap(&batchv1.Job{})
	if err == nil {
		t.Fatal("Wrap(Job) of a ConfigMap extension gave no error")
	}
	for _, want := range []string{"fake", "*v1.ConfigMap", "*v1.Job"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Wrap error %q does not name %s", err, want)
		}
	}
}

// TestTypedUnstructured: an unstructured job has no kind of its own, so the
// empty one carries the extension's.
func TestTypedUnstructured(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Thing"}
	ext := Typed(Extension{Name: "thing", GVK: gvk}, func(u *unstructured.Unstructured) *fakeJob { return nil })
	u, ok := ext.NewObject().(*unstructured.Unstructured)
	if !ok {
		t.Fatalf("NewObject = %T, want *unstructured.Unstructured", ext.NewObject())
	}
	if got := u.GroupVersionKind(); got != gvk {
		t.Errorf("NewObject kind = %v, want %v", got, gvk)
	}
}

// TestEndBy reads conditions as both job kinds that use it write them.
func TestEndBy(t *testing.T) {
	cases := map[string]struct {
		conds []batchv1.JobCondition
		want  JobStatus
	}{
		"no condition": {},
		"complete":     {conds: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Message: "done"}}, want: JobStatus{Finished: true, Message: "done"}},
		"failed":       {conds: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Message: "oom"}}, want: JobStatus{Finished: true, Failed: true, Message: "oom"}},
		"failed, not true": {conds: []batchv1.JobCondition{
			{Type: batchv1.JobFailed, Status: corev1.ConditionFalse, Message: "x"},
			{Type: batchv1.JobComplete, Status: corev1.ConditionUnknown, Message: "y"},
		}},
		"other condition": {conds: []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue, Message: "held"}}},
		"suspended, then complete": {conds: []batchv1.JobCondition{
			{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue, Message: "held"},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Message: "done"},
		}, want: JobStatus{Finished: true, Message: "done"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var st JobStatus
			for _, c := range tc.conds {
				EndBy(&st, c.Type, c.Status, c.Message, batchv1.JobComplete, batchv1.JobFailed)
			}
			if diff := cmp.Diff(tc.want, st); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}
