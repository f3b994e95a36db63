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

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/features"
)

func TestJobPriority(t *testing.T) {
	reader := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000},
	).Build()
	tmpl := func(class string, prio *int32) []PodSet {
		return []PodSet{{Name: "main", Count: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{PriorityClassName: class, Priority: prio}}}}
	}
	cases := map[string]struct {
		annotations map[string]string
		sets        []PodSet
		want        Priority
		wantErr     bool
	}{
		"priority class value":       {sets: tmpl("high", ptr.To[int32](7)), want: Priority{Value: ptr.To[int32](1000), ClassName: "high"}},
		"template priority":          {sets: tmpl("", ptr.To[int32](7)), want: Priority{Value: ptr.To[int32](7)}},
		"missing class falls back":   {sets: tmpl("gone", ptr.To[int32](7)), want: Priority{Value: ptr.To[int32](7), ClassName: "gone"}},
		"no priority":                {sets: tmpl("", nil), want: Priority{}},
		"annotation overrides class": {annotations: map[string]string{schedv1alpha1.PriorityAnnotation: "42"}, sets: tmpl("high", nil), want: Priority{Value: ptr.To[int32](42), ClassName: "high"}},
		"bad annotation":             {annotations: map[string]string{schedv1alpha1.PriorityAnnotation: "x"}, sets: tmpl("", nil), wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			gj := newFakeJob("j", nil, tc.annotations, tc.sets)
			got, err := JobPriority(context.Background(), reader, gj, tc.sets)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestDesiredSpec(t *testing.T) {
	ext := &Extension{Name: "fake", GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap")}
	sets := []PodSet{{Name: "main", Count: 2, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{ctr(rl("cpu", "1"), nil)}}}}}
	gj := newFakeJob("j", map[string]string{schedv1alpha1.QuotaNameLabel: "q"}, map[string]string{
		schedv1alpha1.ActiveAnnotation: "false", schedv1alpha1.MaxExecTimeSecondsAnnotation: "60",
	}, sets)
	got, err := DesiredSpec(ext, gj, sets, Priority{Value: ptr.To[int32](3), ClassName: "c"}, features.Gates{QueueUnitActive: true, MaximumExecutionTime: true})
	if err != nil {
		t.Fatal(err)
	}
	want := schedv1alpha1.QueueUnitSpec{
		ConsumerRef:                 &corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: "j", Namespace: "ns", UID: "uid-1"},
		Priority:                    ptr.To[int32](3),
		Queue:                       "q",
		Resource:                    rl("cpu", "2"),
		Request:                     rl("cpu", "2"),
		PodSet:                      []schedv1alpha1.PodSet{{Name: "main", Count: 2, Template: sets[0].Template}},
		PriorityClassName:           "c",
		Active:                      ptr.To(false),
		MaximumExecutionTimeSeconds: ptr.To[int32](60),
	}
	if diff := cmp.Diff(want, got, cmpQuantities); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Gates off: the annotations are ignored.
	got, _ = DesiredSpec(ext, gj, sets, Priority{}, features.Gates{})
	if got.Active != nil || got.MaximumExecutionTimeSeconds != nil {
		t.Errorf("gates off but active=%v maxExec=%v", got.Active, got.MaximumExecutionTimeSeconds)
	}
	nine := make([]PodSet, 9)
	if _, err := DesiredSpec(ext, gj, nine, Priority{}, features.Gates{}); err == nil {
		t.Errorf("9 pod sets accepted")
	}
}
