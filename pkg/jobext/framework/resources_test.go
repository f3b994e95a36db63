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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
)

var cmpQuantities = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func rl(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func ctr(req, lim corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}
}

func TestPodRequests(t *testing.T) {
	sidecar := ctr(rl("cpu", "1"), nil)
	sidecar.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	cases := map[string]struct {
		spec corev1.PodSpec
		want corev1.ResourceList
	}{
		"containers summed": {
			spec: corev1.PodSpec{Containers: []corev1.Container{ctr(rl("cpu", "1", "memory", "1Gi"), nil), ctr(rl("cpu", "500m"), nil)}},
			want: rl("cpu", "1500m", "memory", "1Gi"),
		},
		"limit stands in for a missing request": {
			spec: corev1.PodSpec{Containers: []corev1.Container{ctr(rl("cpu", "1"), rl("cpu", "2", "memory", "2Gi", "nvidia.com/gpu", "1"))}},
			want: rl("cpu", "1", "memory", "2Gi", "nvidia.com/gpu", "1"),
		},
		"init containers maxed against containers": {
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{ctr(rl("cpu", "4"), nil), ctr(rl("cpu", "1", "memory", "8Gi"), nil)},
				Containers:     []corev1.Container{ctr(rl("cpu", "2", "memory", "1Gi"), nil)},
			},
			want: rl("cpu", "4", "memory", "8Gi"),
		},
		"sidecar added to containers and to later init containers": {
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{sidecar, ctr(rl("cpu", "3"), nil)},
				Containers:     []corev1.Container{ctr(rl("cpu", "1"), nil)},
			},
			want: rl("cpu", "4"),
		},
		"overhead added": {
			spec: corev1.PodSpec{Containers: []corev1.Container{ctr(rl("cpu", "1"), nil)}, Overhead: rl("cpu", "250m", "memory", "64Mi")},
			want: rl("cpu", "1250m", "memory", "64Mi"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, resources.PodRequests(&tc.spec), cmpQuantities); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTotalRequests(t *testing.T) {
	sets := []PodSet{
		{Name: "a", Count: 3, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{ctr(rl("cpu", "1"), nil)}}}},
		{Name: "b", Count: 2, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{ctr(rl("cpu", "500m", "memory", "1Gi"), nil)}}}},
	}
	if diff := cmp.Diff(rl("cpu", "4", "memory", "2Gi"), TotalRequests(sets), cmpQuantities); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestUnitName(t *testing.T) {
	job := &Extension{Name: "job", BareUnitName: true}
	tf := &Extension{Name: "tfjob"}
	long := strings.Repeat("a", 250)
	cases := []struct {
		ext  *Extension
		job  string
		want string
	}{
		{job, "my-job", "my-job"},
		{tf, "train", "train-tfjob"},
		{&Extension{Name: "rayjobv1alpha1"}, "train", "train-rayjobv1alpha1"},
	}
	for _, tc := range cases {
		if got := UnitName(tc.ext, tc.job); got != tc.want {
			t.Errorf("UnitName(%s, %s) = %q, want %q", tc.ext.Name, tc.job, got, tc.want)
		}
	}
	a, b := UnitName(tf, long), UnitName(tf, long+"b")
	if len(a) > MaxUnitNameLength || len(b) > MaxUnitNameLength || a == b {
		t.Errorf("long names: %d %d, distinct=%v", len(a), len(b), a != b)
	}
	if got := UnitName(tf, strings.Repeat("a", 241)+"-"+strings.Repeat("b", 20)); strings.Contains(got, "--") {
		t.Errorf("cut name %q has a dangling dash", got)
	}
}
