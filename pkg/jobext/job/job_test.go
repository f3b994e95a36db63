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

package job

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

func TestCount(t *testing.T) {
	cases := []struct {
		parallelism, completions *int32
		want                     int32
	}{
		{nil, nil, 1},
		{ptr.To[int32](4), nil, 4},
		{nil, ptr.To[int32](5), 1},
		{ptr.To[int32](4), ptr.To[int32](2), 2},
		{ptr.To[int32](2), ptr.To[int32](8), 2},
		{ptr.To[int32](0), ptr.To[int32](8), 0},
	}
	for _, tc := range cases {
		j := Wrap(&batchv1.Job{Spec: batchv1.JobSpec{Parallelism: tc.parallelism, Completions: tc.completions}})
		if got := j.Count(); got != tc.want {
			t.Errorf("parallelism %v completions %v: count %d, want %d", ptr.Deref(tc.parallelism, -1), ptr.Deref(tc.completions, -1), got, tc.want)
		}
	}
}

func TestSuspension(t *testing.T) {
	cases := map[string]struct {
		suspend *bool
		want    bool
	}{
		"suspended":     {ptr.To(true), true},
		"not suspended": {ptr.To(false), false},
		"suspend unset": {nil, false},
	}
	for name, tc := range cases {
		j := Wrap(&batchv1.Job{Spec: batchv1.JobSpec{Suspend: tc.suspend}})
		if got := j.IsSuspended(); got != tc.want {
			t.Errorf("%s: IsSuspended = %v, want %v", name, got, tc.want)
		}
	}
	b := &batchv1.Job{}
	j := Wrap(b)
	j.Suspend()
	if !ptr.Deref(b.Spec.Suspend, false) {
		t.Error("Suspend did not set spec.suspend")
	}
	j.Resume()
	if !ptr.Equal(b.Spec.Suspend, ptr.To(false)) {
		t.Errorf("Resume left spec.suspend %v, want false", b.Spec.Suspend)
	}
}

func TestStatus(t *testing.T) {
	cases := map[string]struct {
		job  batchv1.Job
		want framework.JobStatus
	}{
		"ready pods run, others wait": {
			job:  batchv1.Job{Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](3)}, Status: batchv1.JobStatus{Active: 3, Ready: ptr.To[int32](1)}},
			want: framework.JobStatus{PodSets: []framework.PodSetStatus{{Name: PodSetName, Running: 1, Pending: 2}}},
		},
		"succeeded beyond remaining completions are reclaimable": {
			job:  batchv1.Job{Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](4), Completions: ptr.To[int32](6)}, Status: batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](1), Succeeded: 5}},
			want: framework.JobStatus{PodSets: []framework.PodSetStatus{{Name: PodSetName, Running: 1, Finished: 3}}},
		},
		"failed": {
			job: batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Message: "BackoffLimitExceeded"}}}},
			want: framework.JobStatus{Finished: true, Failed: true, Message: "BackoffLimitExceeded",
				PodSets: []framework.PodSetStatus{{Name: PodSetName}}},
		},
	}
	for name, tc := range cases {
		if diff := cmp.Diff(tc.want, Wrap(&tc.job).Status()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

func TestSuspendResume(t *testing.T) {
	j := Wrap(&batchv1.Job{})
	j.Suspend()
	if !j.IsSuspended() {
		t.Error("Suspend did not suspend")
	}
	j.Resume()
	if j.IsSuspended() || j.Object().(*batchv1.Job).Spec.Suspend == nil {
		t.Error("Resume did not set spec.suspend=false")
	}
}

// TestNeverManagedLauncher: an MPIJob's launcher Job is the MPIJob's to
// queue, a JobSet's Job the JobSet's; other owned Jobs (a CronJob's) are
// queued as Jobs.
func TestNeverManagedLauncher(t *testing.T) {
	owned := func(apiVersion, kind string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{
			{APIVersion: apiVersion, Kind: kind, Name: "x", UID: "u", Controller: ptr.To(true)},
		}}}
	}
	if !Wrap(owned("kubeflow.org/v2beta1", "MPIJob")).NeverManaged() {
		t.Error("an MPIJob's launcher is managed as a Job")
	}
	if !Wrap(owned("jobset.x-k8s.io/v1alpha2", "JobSet")).NeverManaged() {
		t.Error("a JobSet's Job is managed as a Job")
	}
	if Wrap(owned("example.com/v1", "JobSet")).NeverManaged() {
		t.Error("a JobSet kind of another group is never managed")
	}
	if Wrap(owned("batch/v1", "CronJob")).NeverManaged() || Wrap(&batchv1.Job{}).NeverManaged() {
		t.Error("a CronJob's or a bare Job is never managed")
	}
}
