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

package mpijob

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

func cpu(v string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(v)}
}

func spec(replicas *int32, pod corev1.PodSpec) *mpiv2.ReplicaSpec {
	return &mpiv2.ReplicaSpec{Replicas: replicas, Template: corev1.PodTemplateSpec{Spec: pod}}
}

// TestPodSetsAndRequests: the launcher is one pod whatever its replicas say;
// workers count as given; a worker's init container and sidecar and the pod
// overhead are charged as the kubelet would.
func TestPodSetsAndRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	j := &mpiv2.MPIJob{Spec: mpiv2.MPIJobSpec{MPIReplicaSpecs: map[mpiv2.MPIReplicaType]*mpiv2.ReplicaSpec{
		mpiv2.MPIReplicaTypeWorker: spec(ptr.To[int32](3), corev1.PodSpec{
			// Per pod: init 3 runs alone, then sidecar 1 + main 2 run together,
			// plus 100m overhead: 3100m, times 3 workers.
			InitContainers: []corev1.Container{
				{Name: "setup", Resources: corev1.ResourceRequirements{Requests: cpu("3")}},
				{Name: "sidecar", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: cpu("1")}},
			},
			Containers: []corev1.Container{{Name: "mpi", Resources: corev1.ResourceRequirements{Requests: cpu("2")}}},
			Overhead:   cpu("100m"),
		}),
		mpiv2.MPIReplicaTypeLauncher: spec(ptr.To[int32](5), corev1.PodSpec{
			Containers: []corev1.Container{{Name: "launcher", Resources: corev1.ResourceRequirements{Requests: cpu("500m")}}},
		}),
	}}}
	sets, err := Wrap(j).PodSets()
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
	want := []row{{"launcher", 1, "500m"}, {"worker", 3, "9300m"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pod sets (-want +got):\n%s", diff)
	}
	total := framework.TotalRequests(sets)[corev1.ResourceCPU]
	if want := resource.MustParse("9800m"); total.Cmp(want) != 0 {
		t.Errorf("total cpu = %s, want %s", total.String(), want.String())
	}
}

// TestWorkersDefault: workers without replicas are none, as the operator's
// defaulting makes them, and a set of none is left out.
func TestWorkersDefault(t *testing.T) {
	j := &mpiv2.MPIJob{Spec: mpiv2.MPIJobSpec{MPIReplicaSpecs: map[mpiv2.MPIReplicaType]*mpiv2.ReplicaSpec{
		mpiv2.MPIReplicaTypeLauncher: spec(nil, corev1.PodSpec{}),
		mpiv2.MPIReplicaTypeWorker:   spec(nil, corev1.PodSpec{}),
	}}}
	sets, err := Wrap(j).PodSets()
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 1 || sets[0].Name != "launcher" || sets[0].Count != 1 {
		t.Errorf("pod sets = %+v, want the launcher alone", sets)
	}
}

// TestSuspension: only spec.runPolicy.suspend holds an MPIJob; Resume clears
// it and drops the guide's annotation.
func TestSuspension(t *testing.T) {
	ann := &mpiv2.MPIJob{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{schedv1alpha1.SuspendAnnotation: "true", "x": "y"}}}
	if Wrap(ann).IsSuspended() {
		t.Error("the annotation alone holds the MPIJob; the operator ignores it")
	}
	w := Wrap(ann)
	w.Suspend()
	if !ptr.Deref(ann.Spec.RunPolicy.Suspend, false) || !w.IsSuspended() {
		t.Errorf("Suspend: runPolicy.suspend = %v", ann.Spec.RunPolicy.Suspend)
	}
	w.Resume()
	if w.IsSuspended() || !ptr.Equal(ann.Spec.RunPolicy.Suspend, ptr.To(false)) {
		t.Errorf("Resume: runPolicy.suspend = %v", ann.Spec.RunPolicy.Suspend)
	}
	if _, ok := ann.Annotations[schedv1alpha1.SuspendAnnotation]; ok || ann.Annotations["x"] != "y" {
		t.Errorf("Resume: annotations = %v", ann.Annotations)
	}
}

// TestStatus: the operator's Succeeded and Failed conditions end the job; its
// replica statuses say what runs; a startTime says it started.
func TestStatus(t *testing.T) {
	j := &mpiv2.MPIJob{Spec: mpiv2.MPIJobSpec{MPIReplicaSpecs: map[mpiv2.MPIReplicaType]*mpiv2.ReplicaSpec{
		mpiv2.MPIReplicaTypeLauncher: spec(nil, corev1.PodSpec{}),
		mpiv2.MPIReplicaTypeWorker:   spec(ptr.To[int32](2), corev1.PodSpec{}),
	}}}
	w := Wrap(j)
	if w.Started() || w.Status().Finished {
		t.Fatal("a new MPIJob is started or finished")
	}
	j.Status.StartTime = &metav1.Time{}
	j.Status.ReplicaStatuses = map[mpiv2.MPIReplicaType]*mpiv2.ReplicaStatus{
		mpiv2.MPIReplicaTypeLauncher: {Active: 1}, mpiv2.MPIReplicaTypeWorker: {Active: 2},
	}
	j.Status.Conditions = []mpiv2.JobCondition{{Type: mpiv2.JobSuspended, Status: corev1.ConditionFalse}}
	st := w.Status()
	if !w.Started() || st.Running() != 3 || st.Finished {
		t.Errorf("running: started %v, running %d, finished %v", w.Started(), st.Running(), st.Finished)
	}
	j.Status.Conditions = append(j.Status.Conditions, mpiv2.JobCondition{Type: mpiv2.JobFailed, Status: corev1.ConditionTrue, Message: "launcher failed"})
	if st := w.Status(); !st.Finished || !st.Failed || st.Message != "launcher failed" {
		t.Errorf("failed: %+v", st)
	}
}

// TestPodLabels labels both templates.
func TestPodLabels(t *testing.T) {
	j := &mpiv2.MPIJob{Spec: mpiv2.MPIJobSpec{MPIReplicaSpecs: map[mpiv2.MPIReplicaType]*mpiv2.ReplicaSpec{
		mpiv2.MPIReplicaTypeLauncher: spec(nil, corev1.PodSpec{}),
		mpiv2.MPIReplicaTypeWorker:   spec(ptr.To[int32](1), corev1.PodSpec{}),
	}}}
	Wrap(j).SetPodLabels(map[string]string{"a": "b"})
	for typ, s := range j.Spec.MPIReplicaSpecs {
		if s.Template.Labels["a"] != "b" {
			t.Errorf("%s template labels = %v", typ, s.Template.Labels)
		}
	}
}
