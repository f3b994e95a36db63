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

package sparkapp

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	sparkv1beta2 "github.com/kubeflow/spark-operator/v2/api/v1beta2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
)

var cmpQuantities = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func TestParseMemory(t *testing.T) {
	for in, want := range map[string]string{"512m": "512Mi", "2g": "2Gi", "1024k": "1Mi", "1t": "1Ti", "3gb": "3Gi", "512Mi": "512Mi", "1G": "1Gi"} {
		got, err := ParseMemory(in)
		if err != nil || got.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("ParseMemory(%q) = %s, %v; want %s", in, got.String(), err, want)
		}
	}
	if _, err := ParseMemory("lots"); err == nil {
		t.Error("ParseMemory(lots) accepted")
	}
}

func TestPodSets(t *testing.T) {
	cases := map[string]struct {
		spec      sparkv1beta2.SparkApplicationSpec
		driver    corev1.ResourceList
		executor  corev1.ResourceList
		count     int32
		wantClass string
	}{
		"cores, memory and explicit overhead": {
			spec: sparkv1beta2.SparkApplicationSpec{
				Driver:   sparkv1beta2.DriverSpec{SparkPodSpec: sparkv1beta2.SparkPodSpec{Cores: ptr.To[int32](1), Memory: ptr.To("1g"), MemoryOverhead: ptr.To("512m")}, PriorityClassName: ptr.To("high")},
				Executor: sparkv1beta2.ExecutorSpec{Instances: ptr.To[int32](3), SparkPodSpec: sparkv1beta2.SparkPodSpec{Cores: ptr.To[int32](2), Memory: ptr.To("4g"), MemoryOverhead: ptr.To("1g")}},
			},
			driver:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1536Mi")},
			executor:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("5Gi")},
			count:     3,
			wantClass: "high",
		},
		"defaults: 1 core, 1g + 384Mi overhead, one executor": {
			driver:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1408Mi")},
			executor: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1408Mi")},
			count:    1,
		},
		"coreRequest wins, coreLimit when no cores, factor overhead, gpu": {
			spec: sparkv1beta2.SparkApplicationSpec{
				MemoryOverheadFactor: ptr.To("0.5"),
				Driver:               sparkv1beta2.DriverSpec{CoreRequest: ptr.To("500m"), SparkPodSpec: sparkv1beta2.SparkPodSpec{Cores: ptr.To[int32](2), Memory: ptr.To("2g")}},
				Executor: sparkv1beta2.ExecutorSpec{SparkPodSpec: sparkv1beta2.SparkPodSpec{CoreLimit: ptr.To("3"), Memory: ptr.To("2g"),
					GPU: &sparkv1beta2.GPUSpec{Name: "nvidia.com/gpu", Quantity: 1}}},
				DynamicAllocation: &sparkv1beta2.DynamicAllocation{Enabled: true, MinExecutors: ptr.To[int32](2), MaxExecutors: ptr.To[int32](8)},
			},
			driver:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("3Gi")},
			executor: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("3Gi"), "nvidia.com/gpu": resource.MustParse("1")},
			count:    2,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sets, err := Wrap(&sparkv1beta2.SparkApplication{Spec: tc.spec}).PodSets()
			if err != nil {
				t.Fatal(err)
			}
			if len(sets) != 2 || sets[0].Name != DriverPodSet || sets[1].Name != ExecutorPodSet || sets[0].Count != 1 || sets[1].Count != tc.count {
				t.Fatalf("sets %+v", sets)
			}
			if diff := cmp.Diff(tc.driver, resources.PodRequests(&sets[0].Template.Spec), cmpQuantities); diff != "" {
				t.Errorf("driver (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.executor, resources.PodRequests(&sets[1].Template.Spec), cmpQuantities); diff != "" {
				t.Errorf("executor (-want +got):\n%s", diff)
			}
			if sets[0].Template.Spec.PriorityClassName != tc.wantClass {
				t.Errorf("driver priority class %q, want %q", sets[0].Template.Spec.PriorityClassName, tc.wantClass)
			}
		})
	}
}

// TestSuspension: spec.suspend (what spark-operator v2 obeys) holds an
// application, the annotation alone does not; Suspend and Resume write both.
func TestSuspension(t *testing.T) {
	cases := map[string]struct {
		annotations map[string]string
		suspend     *bool
		want        bool
	}{
		"spec.suspend":         {nil, ptr.To(true), true},
		"annotation only":      {map[string]string{schedv1alpha1.SuspendAnnotation: "true"}, nil, false},
		"spec.suspend false":   {nil, ptr.To(false), false},
		"neither field is set": {nil, nil, false},
	}
	for name, tc := range cases {
		a := &sparkv1beta2.SparkApplication{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations}}
		a.Spec.Suspend = tc.suspend
		if got := Wrap(a).IsSuspended(); got != tc.want {
			t.Errorf("%s: IsSuspended = %v, want %v", name, got, tc.want)
		}
	}
	a := &sparkv1beta2.SparkApplication{}
	w := Wrap(a)
	w.Suspend()
	if a.Annotations[schedv1alpha1.SuspendAnnotation] != "true" || !ptr.Deref(a.Spec.Suspend, false) {
		t.Errorf("after Suspend: annotation %q spec.suspend %v", a.Annotations[schedv1alpha1.SuspendAnnotation], a.Spec.Suspend)
	}
	w.Resume()
	if a.Annotations[schedv1alpha1.SuspendAnnotation] != "false" || !ptr.Equal(a.Spec.Suspend, ptr.To(false)) {
		t.Errorf("after Resume: annotation %q spec.suspend %v", a.Annotations[schedv1alpha1.SuspendAnnotation], a.Spec.Suspend)
	}
}
