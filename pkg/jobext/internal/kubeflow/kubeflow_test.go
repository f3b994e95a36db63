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

package kubeflow

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	kfv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

func wrapTF(j *kfv1.TFJob) *Job {
	return New(j, j.Spec.TFReplicaSpecs, &j.Spec.RunPolicy, &j.Status,
		[]kfv1.ReplicaType{kfv1.TFJobReplicaTypeChief, kfv1.TFJobReplicaTypePS, kfv1.TFJobReplicaTypeWorker})
}

func TestPodSetsOrder(t *testing.T) {
	j := &kfv1.TFJob{Spec: kfv1.TFJobSpec{TFReplicaSpecs: map[kfv1.ReplicaType]*kfv1.ReplicaSpec{
		"Zeta": {Replicas: ptr.To[int32](1)}, kfv1.TFJobReplicaTypeWorker: {Replicas: ptr.To[int32](4)},
		kfv1.TFJobReplicaTypePS: {}, "Alpha": {Replicas: ptr.To[int32](2)},
	}}}
	sets, err := wrapTF(j).PodSets()
	if err != nil {
		t.Fatal(err)
	}
	type nc struct {
		Name  string
		Count int32
	}
	var got []nc
	for _, s := range sets {
		got = append(got, nc{s.Name, s.Count})
	}
	want := []nc{{"ps", 1}, {"worker", 4}, {"alpha", 2}, {"zeta", 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestIsSuspended: only the field the training operator obeys holds a job;
// the guide's annotation alone does not.
func TestIsSuspended(t *testing.T) {
	cases := map[string]struct {
		job  kfv1.TFJob
		want bool
	}{
		"runPolicy.suspend": {kfv1.TFJob{Spec: kfv1.TFJobSpec{RunPolicy: kfv1.RunPolicy{Suspend: ptr.To(true)}}}, true},
		"annotation only":   {kfv1.TFJob{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{schedv1alpha1.SuspendAnnotation: "true"}}}, false},
		"plain":             {kfv1.TFJob{}, false},
	}
	for name, tc := range cases {
		if got := wrapTF(&tc.job).IsSuspended(); got != tc.want {
			t.Errorf("%s: IsSuspended = %v, want %v", name, got, tc.want)
		}
	}
}

func TestResumeDropsAnnotation(t *testing.T) {
	j := &kfv1.TFJob{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{schedv1alpha1.SuspendAnnotation: "true", "x": "y"}}}
	w := wrapTF(j)
	w.Resume()
	if w.IsSuspended() || j.Annotations[schedv1alpha1.SuspendAnnotation] != "" || j.Annotations["x"] != "y" || !ptr.Equal(j.Spec.RunPolicy.Suspend, ptr.To(false)) {
		t.Errorf("after Resume: annotations %v runPolicy.suspend %v", j.Annotations, j.Spec.RunPolicy.Suspend)
	}
	w.Suspend()
	if !ptr.Deref(j.Spec.RunPolicy.Suspend, false) {
		t.Error("Suspend did not set runPolicy.suspend")
	}
}
