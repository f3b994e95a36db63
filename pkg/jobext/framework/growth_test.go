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

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
)

func podSet(name string, count int32, req corev1.ResourceList) PodSet {
	return PodSet{Name: name, Count: count, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{ctr(req, nil)}}}}
}

func TestExceeds(t *testing.T) {
	admitted := []schedv1alpha1.Admission{
		{Name: "head", Replicas: 1, Resources: rl("cpu", "1")},
		{Name: "worker", Replicas: 2, Resources: rl("cpu", "2", "memory", "1Gi")},
	}
	cases := map[string]struct {
		sets     []PodSet
		admitted []schedv1alpha1.Admission
		want     string
	}{
		"as admitted": {
			sets:     []PodSet{podSet("head", 1, rl("cpu", "1")), podSet("worker", 2, rl("cpu", "2", "memory", "1Gi"))},
			admitted: admitted,
		},
		"fewer or smaller pods": {
			sets:     []PodSet{podSet("head", 1, rl("cpu", "500m")), podSet("worker", 1, rl("cpu", "2"))},
			admitted: admitted,
		},
		"more pods": {
			sets:     []PodSet{podSet("head", 1, rl("cpu", "1")), podSet("worker", 5, rl("cpu", "2", "memory", "1Gi"))},
			admitted: admitted,
			want:     "pod set worker grew from 2 to 5 pods",
		},
		"bigger pods": {
			sets:     []PodSet{podSet("head", 1, rl("cpu", "1")), podSet("worker", 2, rl("cpu", "2", "memory", "2Gi"))},
			admitted: admitted,
			want:     "pods of set worker grew: memory 2Gi, admitted with 1Gi",
		},
		"a resource not admitted at all": {
			sets:     []PodSet{podSet("head", 1, rl("cpu", "1", "nvidia.com/gpu", "1"))},
			admitted: admitted,
			want:     "pods of set head grew: nvidia.com/gpu 1, admitted with 0",
		},
		"one default replica compared in total": {
			sets:     []PodSet{podSet("driver", 1, rl("cpu", "1")), podSet("executor", 4, rl("cpu", "1"))},
			admitted: []schedv1alpha1.Admission{{Name: "default", Replicas: 1, Resources: rl("cpu", "4")}},
			want:     "job grew: it asks cpu 5 in all, admitted with 4",
		},
		"within the default replica": {
			sets:     []PodSet{podSet("driver", 1, rl("cpu", "1")), podSet("executor", 3, rl("cpu", "1"))},
			admitted: []schedv1alpha1.Admission{{Name: "default", Replicas: 1, Resources: rl("cpu", "4")}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Exceeds(tc.sets, tc.admitted); got != tc.want {
				t.Errorf("Exceeds = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWithLimitRangeDefaults(t *testing.T) {
	ranges := []corev1.LimitRange{
		{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
			{Type: corev1.LimitTypePod, DefaultRequest: rl("cpu", "9")},
			{Type: corev1.LimitTypeContainer, DefaultRequest: rl("cpu", "250m"), Default: rl("cpu", "1", "memory", "512Mi")},
		}}},
	}
	ranges[0].Name = "b"
	second := corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypeContainer, DefaultRequest: rl("memory", "128Mi", "ephemeral-storage", "1Gi")},
	}}}
	second.Name = "a"
	ranges = append(ranges, second)

	in := []PodSet{{Name: "main", Count: 2, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{ctr(nil, nil)},
		Containers:     []corev1.Container{ctr(nil, nil), ctr(rl("cpu", "2"), rl("memory", "1Gi"))},
	}}}}
	out := WithLimitRangeDefaults(in, ranges)
	// The first by name ("a") sets memory and storage requests; "b" the cpu
	// request; the second container keeps what it asked, its limit standing
	// in for its memory request.
	got := resources.PodRequests(&out[0].Template.Spec)
	want := rl("cpu", "2250m", "memory", "1152Mi", "ephemeral-storage", "2Gi")
	if diff := cmpDiff(want, got); diff != "" {
		t.Errorf("pod requests (-want +got):\n%s", diff)
	}
	if len(in[0].Template.Spec.Containers[0].Resources.Requests) != 0 {
		t.Errorf("the job's own pod set was changed: %v", in[0].Template.Spec.Containers[0].Resources)
	}
}

func TestCheckSets(t *testing.T) {
	if err := checkSets([]PodSet{podSet("main", 3, rl("cpu", "2"))}); err != nil {
		t.Fatal(err)
	}
	err := checkSets([]PodSet{podSet("main", 1, rl("memory", "1e30"))})
	if err == nil || !strings.Contains(err.Error(), "pod set main: memory: 1e30 is above the bound") {
		t.Errorf("err = %v", err)
	}
}

func cmpDiff(want, got corev1.ResourceList) string {
	return cmp.Diff(want, got, cmpQuantities)
}

func TestGiveBackShrunk(t *testing.T) {
	admitted := []schedv1alpha1.Admission{{Name: "main", Replicas: 4, Resources: rl("cpu", "1")}}
	cases := map[string]struct {
		count     int32
		status    JobStatus
		finished  []schedv1alpha1.ReclaimablePod
		wantCount int32
	}{
		"same size":                       {count: 4, status: JobStatus{PodSets: []PodSetStatus{{Name: "main", Running: 4}}}},
		"lowered, extra pods terminating": {count: 2, status: JobStatus{PodSets: []PodSetStatus{{Name: "main", Running: 2, Pending: 2}}}},
		"lowered, extra pods gone":        {count: 2, status: JobStatus{PodSets: []PodSetStatus{{Name: "main", Running: 2}}}, wantCount: 2},
		"lowered, and one finished":       {count: 2, status: JobStatus{PodSets: []PodSetStatus{{Name: "main", Running: 1}}}, finished: []schedv1alpha1.ReclaimablePod{{Name: "main", Count: 1}}, wantCount: 3},
		"never more than admitted":        {count: 0, status: JobStatus{}, finished: []schedv1alpha1.ReclaimablePod{{Name: "main", Count: 4}}, wantCount: 4},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			unit := &schedv1alpha1.QueueUnit{}
			unit.Status.Admissions = admitted
			unit.Status.ReclaimablePods = tc.finished
			GiveBackShrunk(unit, []PodSet{podSet("main", tc.count, rl("cpu", "1"))}, tc.status)
			var got int32
			for _, rp := range unit.Status.ReclaimablePods {
				got += rp.Count
			}
			if got != tc.wantCount {
				t.Errorf("reclaimable = %v, want %d", unit.Status.ReclaimablePods, tc.wantCount)
			}
		})
	}
}
