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

package raycluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

func TestGroupCount(t *testing.T) {
	cases := map[string]struct {
		g       Group
		want    int32
		wantMin *int32
	}{
		"replicas":                    {Group{Replicas: ptr.To[int32](3)}, 3, nil},
		"replicas unset: minReplicas": {Group{MinReplicas: ptr.To[int32](2)}, 2, ptr.To[int32](2)},
		"nothing set":                 {Group{}, 0, nil},
		"capped by maxReplicas":       {Group{Replicas: ptr.To[int32](9), MaxReplicas: ptr.To[int32](4)}, 4, nil},
		"raised to minReplicas":       {Group{Replicas: ptr.To[int32](1), MinReplicas: ptr.To[int32](2), MaxReplicas: ptr.To[int32](5)}, 2, ptr.To[int32](2)},
		"times hosts":                 {Group{Replicas: ptr.To[int32](2), MinReplicas: ptr.To[int32](1), NumOfHosts: 4}, 8, ptr.To[int32](4)},
	}
	for name, tc := range cases {
		if got := tc.g.Count(); got != tc.want {
			t.Errorf("%s: count %d, want %d", name, got, tc.want)
		}
		if diff := cmp.Diff(tc.wantMin, tc.g.MinCount()); diff != "" {
			t.Errorf("%s: minCount (-want +got):\n%s", name, diff)
		}
	}
}

func TestPodSetsAndResources(t *testing.T) {
	tmpl := func(cpu string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
	}
	c := &rayv1.RayCluster{Spec: rayv1.RayClusterSpec{
		HeadGroupSpec: rayv1.HeadGroupSpec{Template: tmpl("1")},
		WorkerGroupSpecs: []rayv1.WorkerGroupSpec{
			{GroupName: "cpu", Replicas: ptr.To[int32](3), MinReplicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](5), Template: tmpl("2")},
			{GroupName: "big", MinReplicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](2), Template: tmpl("4")},
		},
	}}
	sets, err := Wrap(c).PodSets()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range sets {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"head", "cpu", "big"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	total := framework.TotalRequests(sets)
	if q := total[corev1.ResourceCPU]; q.Cmp(resource.MustParse("11")) != 0 {
		t.Errorf("cpu = %s, want 11 (1 + 3x2 + 1x4, limits as requests)", q.String())
	}
	c.Spec.WorkerGroupSpecs[1].GroupName = "head"
	if _, err := Wrap(c).PodSets(); err == nil {
		t.Error("duplicate group name accepted")
	}
}

func TestNeverManaged(t *testing.T) {
	cases := map[string]struct {
		meta metav1.ObjectMeta
		want bool
	}{
		"plain":                 {metav1.ObjectMeta{}, false},
		"owned by a RayJob":     {metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{Kind: "RayJob", Name: "j"}}}, true},
		"originated RayCluster": {metav1.ObjectMeta{Labels: map[string]string{OriginatedFromLabel: "RayCluster"}}, true},
	}
	for name, tc := range cases {
		c := &rayv1.RayCluster{ObjectMeta: tc.meta, Spec: rayv1.RayClusterSpec{Suspend: ptr.To(true)}}
		if got := Wrap(c).NeverManaged(); got != tc.want {
			t.Errorf("%s: NeverManaged = %v, want %v", name, got, tc.want)
		}
	}
}
