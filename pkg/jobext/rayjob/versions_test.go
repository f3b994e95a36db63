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

package rayjob

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayv1alpha1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

// pair is one RayJob written in both API versions: a head and a worker
// group "w" of 2 to 4 replicas asking for 3, with the given status.
func pair(deployment, jobStatus, message string) (*rayv1.RayJob, *rayv1alpha1.RayJob) {
	v1 := &rayv1.RayJob{
		Spec: rayv1.RayJobSpec{RayClusterSpec: &rayv1.RayClusterSpec{WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{
			GroupName: "w", Replicas: ptr.To[int32](3), MinReplicas: ptr.To[int32](2), MaxReplicas: ptr.To[int32](4),
		}}}},
		Status: rayv1.RayJobStatus{
			JobDeploymentStatus: rayv1.JobDeploymentStatus(deployment), JobStatus: rayv1.JobStatus(jobStatus), Message: message,
		},
	}
	alpha := &rayv1alpha1.RayJob{
		Spec: rayv1alpha1.RayJobSpec{RayClusterSpec: &rayv1alpha1.RayClusterSpec{WorkerGroupSpecs: []rayv1alpha1.WorkerGroupSpec{{
			GroupName: "w", Replicas: ptr.To[int32](3), MinReplicas: ptr.To[int32](2), MaxReplicas: ptr.To[int32](4),
		}}}},
		Status: rayv1alpha1.RayJobStatus{
			JobDeploymentStatus: rayv1alpha1.JobDeploymentStatus(deployment), JobStatus: rayv1alpha1.JobStatus(jobStatus), Message: message,
		},
	}
	return v1, alpha
}

// TestStatusBothVersions: a RayJob reads the same in both API versions, for
// every deployment status the queue tells apart.
func TestStatusBothVersions(t *testing.T) {
	pending := []framework.PodSetStatus{{Name: "head", Pending: 1}, {Name: "w", Pending: 3}}
	running := []framework.PodSetStatus{{Name: "head", Running: 1}, {Name: "w", Running: 3}}
	cases := map[string]struct {
		deployment, jobStatus, message string
		want                           framework.JobStatus
	}{
		"new":          {deployment: ""},
		"initializing": {deployment: "Initializing", want: framework.JobStatus{PodSets: pending}},
		"waiting":      {deployment: "Waiting", want: framework.JobStatus{PodSets: pending}},
		"retrying":     {deployment: "Retrying", want: framework.JobStatus{PodSets: pending}},
		"suspending":   {deployment: "Suspending", want: framework.JobStatus{PodSets: pending}},
		"running":      {deployment: "Running", jobStatus: "RUNNING", want: framework.JobStatus{PodSets: running}},
		"suspended":    {deployment: "Suspended"},
		"complete, succeeded": {deployment: "Complete", jobStatus: "SUCCEEDED", message: "ok",
			want: framework.JobStatus{Finished: true, Message: "ok"}},
		"complete, stopped": {deployment: "Complete", jobStatus: "STOPPED", message: "stopped",
			want: framework.JobStatus{Finished: true, Failed: true, Message: "stopped"}},
		"failed": {deployment: "Failed", jobStatus: "FAILED", message: "boom",
			want: framework.JobStatus{Finished: true, Failed: true, Message: "boom"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v1, alpha := pair(tc.deployment, tc.jobStatus, tc.message)
			if diff := cmp.Diff(tc.want, WrapV1(v1).Status()); diff != "" {
				t.Errorf("v1 status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, WrapV1alpha1(alpha).Status()); diff != "" {
				t.Errorf("v1alpha1 status (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPodSetsBothVersions: both versions give the head and the worker group
// with its counts, and the wrapper follows changes made to the job after
// wrapping (the client updates a job in place).
func TestPodSetsBothVersions(t *testing.T) {
	v1, alpha := pair("", "", "")
	type count struct {
		Name  string
		Count int32
		Min   *int32
	}
	counts := func(sets []framework.PodSet) []count {
		var out []count
		for _, s := range sets {
			out = append(out, count{s.Name, s.Count, s.MinCount})
		}
		return out
	}
	want := []count{{"head", 1, nil}, {"w", 3, ptr.To[int32](2)}}
	for _, gj := range []*Job{WrapV1(v1), WrapV1alpha1(alpha)} {
		sets, err := gj.PodSets()
		if err != nil {
			t.Fatalf("%T: %v", gj.Object(), err)
		}
		if diff := cmp.Diff(want, counts(sets)); diff != "" {
			t.Errorf("%T pod sets (-want +got):\n%s", gj.Object(), diff)
		}
	}
	w1, wa := WrapV1(v1), WrapV1alpha1(alpha)
	now := metav1.Now()
	v1.Status.StartTime, alpha.Status.StartTime = &now, &now
	v1.Spec.RayClusterSpec, alpha.Spec.RayClusterSpec = nil, nil
	if !w1.Started() || !wa.Started() {
		t.Error("a start time set after wrapping is not seen")
	}
	if _, err := w1.PodSets(); err == nil {
		t.Error("v1: a cluster spec dropped after wrapping is still read")
	}
	if _, err := wa.PodSets(); err == nil {
		t.Error("v1alpha1: RayJob without rayClusterSpec queued")
	}
}
