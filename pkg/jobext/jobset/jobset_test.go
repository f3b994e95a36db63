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

package jobset

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetv1 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

func cpu(v string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(v)}
}

func rjob(name string, replicas int32, parallelism, completions *int32, pod corev1.PodSpec) jobsetv1.ReplicatedJob {
	return jobsetv1.ReplicatedJob{Name: name, Replicas: replicas, Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
		Parallelism: parallelism, Completions: completions, Template: corev1.PodTemplateSpec{Spec: pod},
	}}}
}

func mainPod(req string) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{Requests: cpu(req)}}}}
}

// TestPodSetsAndRequests: one set per replicated job, in the JobSet's order,
// of replicas times the pods a Job runs at once (min of parallelism and
// completions, parallelism 1 by default); init containers, a sidecar and the
// pod overhead are charged as the kubelet would; a replicated job of no
// pods is left out.
func TestPodSetsAndRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	workers := corev1.PodSpec{
		// Per pod: init 3 runs alone, then sidecar 1 + main 2 run together,
		// plus 100m overhead: 3100m.
		InitContainers: []corev1.Container{
			{Name: "setup", Resources: corev1.ResourceRequirements{Requests: cpu("3")}},
			{Name: "sidecar", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: cpu("1")}},
		},
		Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{Requests: cpu("2")}}},
		Overhead:   cpu("100m"),
	}
	js := &jobsetv1.JobSet{Spec: jobsetv1.JobSetSpec{ReplicatedJobs: []jobsetv1.ReplicatedJob{
		rjob("workers", 2, ptr.To[int32](4), ptr.To[int32](3), workers), // 2 Jobs of 3 pods
		rjob("driver", 1, nil, nil, mainPod("500m")),                    // 1 pod
		rjob("idle", 0, ptr.To[int32](5), nil, mainPod("1")),            // none
		rjob("wide", 3, ptr.To[int32](2), nil, mainPod("250m")),         // 3 Jobs of 2 pods
	}}}
	sets, err := Wrap(js).PodSets()
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name  string
		Count int32
		CPU   string
	}
	var got []row
	for i := range sets {
		q := framework.PodSetRequests(&sets[i])[corev1.ResourceCPU]
		got = append(got, row{sets[i].Name, sets[i].Count, q.String()})
	}
	want := []row{{"workers", 6, "18600m"}, {"driver", 1, "500m"}, {"wide", 6, "1500m"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pod sets (-want +got):\n%s", diff)
	}
	total := framework.TotalRequests(sets)[corev1.ResourceCPU]
	if want := resource.MustParse("20600m"); total.Cmp(want) != 0 {
		t.Errorf("total cpu = %s, want %s", total.String(), want.String())
	}
}

// TestTooManyPodSets: nine replicated jobs with pods are more than a unit
// takes, and the refusal names the limit; eight are fine.
func TestTooManyPodSets(t *testing.T) {
	js := &jobsetv1.JobSet{}
	for i := range 9 {
		js.Spec.ReplicatedJobs = append(js.Spec.ReplicatedJobs, rjob(string(rune('a'+i)), 1, nil, nil, mainPod("1")))
	}
	sets, err := Wrap(js).PodSets()
	if err != nil {
		t.Fatal(err)
	}
	if err := framework.CheckPodSetCount(sets); err == nil {
		t.Error("nine pod sets accepted")
	}
	if err := framework.CheckPodSetCount(sets[:schedv1alpha1.MaxPodSets]); err != nil {
		t.Errorf("eight pod sets refused: %v", err)
	}
}

// TestSuspension: spec.suspend holds a JobSet; Resume clears it and drops the
// guide's annotation, leaving others.
func TestSuspension(t *testing.T) {
	js := &jobsetv1.JobSet{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{schedv1alpha1.SuspendAnnotation: "true", "x": "y"}}}
	w := Wrap(js)
	if w.IsSuspended() {
		t.Error("the annotation alone holds the JobSet; its controller ignores it")
	}
	w.Suspend()
	if !ptr.Deref(js.Spec.Suspend, false) || !w.IsSuspended() {
		t.Errorf("Suspend: spec.suspend = %v", js.Spec.Suspend)
	}
	w.Resume()
	if w.IsSuspended() || !ptr.Equal(js.Spec.Suspend, ptr.To(false)) {
		t.Errorf("Resume: spec.suspend = %v", js.Spec.Suspend)
	}
	if _, ok := js.Annotations[schedv1alpha1.SuspendAnnotation]; ok || js.Annotations["x"] != "y" {
		t.Errorf("Resume: annotations = %v", js.Annotations)
	}
}

// TestStatus: replicatedJobsStatus counts Jobs; the pods of ready Jobs run,
// of active unready ones wait, of succeeded ones are finished. The Completed
// and Failed conditions end the JobSet.
func TestStatus(t *testing.T) {
	js := &jobsetv1.JobSet{Spec: jobsetv1.JobSetSpec{ReplicatedJobs: []jobsetv1.ReplicatedJob{
		rjob("workers", 3, ptr.To[int32](2), nil, corev1.PodSpec{}),
		rjob("driver", 1, nil, nil, corev1.PodSpec{}),
	}}}
	w := Wrap(js)
	if st := w.Status(); st.Finished || st.Active() != 0 {
		t.Fatalf("a new JobSet: %+v", st)
	}
	js.Status.ReplicatedJobsStatus = []jobsetv1.ReplicatedJobStatus{
		{Name: "driver", Ready: 0, Active: 1},
		{Name: "workers", Ready: 1, Active: 2, Succeeded: 1},
	}
	st := w.Status()
	want := []framework.PodSetStatus{{Name: "workers", Running: 2, Pending: 2, Finished: 2}, {Name: "driver", Pending: 1}}
	if diff := cmp.Diff(want, st.PodSets); diff != "" || st.Finished {
		t.Errorf("running (-want +got):\n%s finished %v", diff, st.Finished)
	}
	js.Status.Conditions = []metav1.Condition{{Type: string(jobsetv1.JobSetFailed), Status: metav1.ConditionTrue, Message: "jobset failed"}}
	if st := w.Status(); !st.Finished || !st.Failed || st.Message != "jobset failed" {
		t.Errorf("failed: %+v", st)
	}
	js.Status.Conditions = []metav1.Condition{{Type: string(jobsetv1.JobSetCompleted), Status: metav1.ConditionTrue}}
	if st := w.Status(); !st.Finished || st.Failed {
		t.Errorf("completed: %+v", st)
	}
}

// TestPodLabels labels every replicated job's pod template and reports a
// label set to another value.
func TestPodLabels(t *testing.T) {
	js := &jobsetv1.JobSet{Spec: jobsetv1.JobSetSpec{ReplicatedJobs: []jobsetv1.ReplicatedJob{
		rjob("a", 1, nil, nil, corev1.PodSpec{}), rjob("b", 1, nil, nil, corev1.PodSpec{}),
	}}}
	js.Spec.ReplicatedJobs[1].Template.Spec.Template.Labels = map[string]string{"a": "other"}
	replaced := Wrap(js).SetPodLabels(map[string]string{"a": "b"})
	for _, rj := range js.Spec.ReplicatedJobs {
		if rj.Template.Spec.Template.Labels["a"] != "b" {
			t.Errorf("%s pod template labels = %v", rj.Name, rj.Template.Spec.Template.Labels)
		}
	}
	if len(replaced) != 1 {
		t.Errorf("replaced = %+v, want the one label of b", replaced)
	}
}

// TestNeverManagedTrainJobs: a JobSet a TrainJob controls is the TrainJob's
// to queue; one owned by another kind, or by a TrainJob of another group, is
// queued as a JobSet.
func TestNeverManagedTrainJobs(t *testing.T) {
	owned := func(apiVersion, kind string, controller bool) *jobsetv1.JobSet {
		return &jobsetv1.JobSet{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{
			{APIVersion: apiVersion, Kind: kind, Name: "o", UID: "u", Controller: ptr.To(controller)},
		}}}
	}
	if !Wrap(owned("trainer.kubeflow.org/v1alpha1", "TrainJob", true)).NeverManaged() {
		t.Error("a TrainJob's JobSet is managed as a JobSet")
	}
	for _, js := range []*jobsetv1.JobSet{
		owned("example.com/v1", "TrainJob", true), owned("trainer.kubeflow.org/v1alpha1", "TrainJob", false),
		owned("batch/v1", "CronJob", true), {},
	} {
		if Wrap(js).NeverManaged() {
			t.Errorf("JobSet owned by %+v is never managed", js.OwnerReferences)
		}
	}
}
