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

package resources

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

func rl(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

func TestPodRequests(t *testing.T) {
	always := ptr.To(corev1.ContainerRestartPolicyAlways)
	cases := []struct {
		name string
		spec corev1.PodSpec
		want corev1.ResourceList
	}{
		{"containers summed", corev1.PodSpec{Containers: []corev1.Container{
			{Resources: corev1.ResourceRequirements{Requests: rl("cpu", "1", "memory", "1Gi")}},
			{Resources: corev1.ResourceRequirements{Requests: rl("cpu", "500m")}},
		}}, rl("cpu", "1500m", "memory", "1Gi")},
		{"limit used where request missing", corev1.PodSpec{Containers: []corev1.Container{
			{Resources: corev1.ResourceRequirements{Requests: rl("cpu", "1"), Limits: rl("cpu", "2", "memory", "2Gi")}},
		}}, rl("cpu", "1", "memory", "2Gi")},
		{"init container peak", corev1.PodSpec{
			InitContainers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: rl("cpu", "3")}}},
			Containers:     []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: rl("cpu", "1", "memory", "1Gi")}}},
		}, rl("cpu", "3", "memory", "1Gi")},
		{"sidecar added", corev1.PodSpec{
			InitContainers: []corev1.Container{{RestartPolicy: always, Resources: corev1.ResourceRequirements{Requests: rl("cpu", "1")}}},
			Containers:     []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: rl("cpu", "1")}}},
		}, rl("cpu", "2")},
		{"overhead added", corev1.PodSpec{
			Overhead:   rl("cpu", "100m"),
			Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: rl("cpu", "1")}}},
		}, rl("cpu", "1100m")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := PodRequests(&tc.spec)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for n, q := range tc.want {
				if g := got[n]; g.Cmp(q) != 0 {
					t.Errorf("%s = %s, want %s", n, g.String(), q.String())
				}
			}
		})
	}
}
