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
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

// Name is the extension's name.
const Name = "jobset"

// Kind is the JobSet kind.
const Kind = "JobSet"

// New describes the JobSet extension.
func New(framework.ExtensionOptions) framework.Extension {
	gv := jobsetv1.SchemeGroupVersion
	return framework.Typed(framework.Extension{
		Name: Name, GVK: gv.WithKind(Kind), CRD: "jobsets." + gv.Group,
	}, Wrap)
}

// Job is a JobSet seen by the queue.
type Job struct{ js *jobsetv1.JobSet }

var (
	_ framework.GenericJob   = (*Job)(nil)
	_ framework.NeverManaged = (*Job)(nil)
)

// NeverManaged: the JobSet of a Kubeflow TrainJob. The trainer creates it,
// suspended while its TrainJob is, and the TrainJob's unit already charges
// it.
func (w *Job) NeverManaged() bool {
	c := metav1.GetControllerOf(w.js)
	return c != nil && c.Kind == "TrainJob" && strings.HasPrefix(c.APIVersion, "trainer.kubeflow.org/")
}

// Wrap wraps a JobSet.
func Wrap(js *jobsetv1.JobSet) *Job { return &Job{js: js} }

// Object returns the JobSet.
func (w *Job) Object() client.Object { return w.js }

// IsSuspended reads spec.suspend.
func (w *Job) IsSuspended() bool { return ptr.Deref(w.js.Spec.Suspend, false) }

// Suspend sets spec.suspend: the jobset controller suspends every Job it
// made, and the Job controller deletes their pods.
func (w *Job) Suspend() { w.js.Spec.Suspend = ptr.To(true) }

// Resume clears spec.suspend and drops the suspend annotation.
func (w *Job) Resume() {
	w.js.Spec.Suspend = ptr.To(false)
	if a := w.js.GetAnnotations(); a != nil {
		if _, ok := a[schedv1alpha1.SuspendAnnotation]; ok {
			delete(a, schedv1alpha1.SuspendAnnotation)
			w.js.SetAnnotations(a)
		}
	}
}

// podsPerJob is how many pods one Job of a replicated job runs at once,
// counted as the Job extension counts a Job.
func podsPerJob(rj *jobsetv1.ReplicatedJob) int32 {
	return framework.JobPodsAtOnce(&rj.Template.Spec)
}

// PodSets is one set per replicated job, in the JobSet's order: its replicas
// times the pods each of its Jobs runs at once. A replicated job of no pods
// is left out. A JobSet of more replicated jobs than a unit takes is refused
// by the caller with the limit named.
func (w *Job) PodSets() ([]framework.PodSet, error) {
	var sets []framework.PodSet
	for i := range w.js.Spec.ReplicatedJobs {
		rj := &w.js.Spec.ReplicatedJobs[i]
		count := max(rj.Replicas, 0) * podsPerJob(rj)
		if count == 0 {
			continue
		}
		if rj.Name == "" {
			return nil, fmt.Errorf("spec.replicatedJobs[%d] has no name", i)
		}
		sets = append(sets, framework.PodSet{Name: rj.Name, Count: count, Template: *rj.Template.Spec.Template.DeepCopy()})
	}
	return sets, nil
}

// SetPodLabels labels the pod template of every replicated job; the jobset
// controller copies template labels into the Jobs it resumes.
func (w *Job) SetPodLabels(labels map[string]string) []framework.ReplacedLabel {
	var replaced []framework.ReplacedLabel
	for i := range w.js.Spec.ReplicatedJobs {
		rj := &w.js.Spec.ReplicatedJobs[i]
		where := fmt.Sprintf("spec.replicatedJobs[%s].template.spec.template", rj.Name)
		replaced = append(replaced, framework.SetLabels(&rj.Template.Spec.Template.Labels, labels, where)...)
	}
	return replaced
}

// Status reads the Completed and Failed conditions and
// status.replicatedJobsStatus, which counts Jobs, not pods: a ready Job's
// pods run, an active one's that is not ready wait, a succeeded one's are
// finished.
func (w *Job) Status() framework.JobStatus {
	var st framework.JobStatus
	for _, c := range w.js.Status.Conditions {
		framework.EndBy(&st, jobsetv1.JobSetConditionType(c.Type), corev1.ConditionStatus(c.Status), c.Message, jobsetv1.JobSetCompleted, jobsetv1.JobSetFailed)
	}
	byName := map[string]*jobsetv1.ReplicatedJobStatus{}
	for i := range w.js.Status.ReplicatedJobsStatus {
		s := &w.js.Status.ReplicatedJobsStatus[i]
		byName[s.Name] = s
	}
	for i := range w.js.Spec.ReplicatedJobs {
		rj := &w.js.Spec.ReplicatedJobs[i]
		s := byName[rj.Name]
		if s == nil {
			continue
		}
		n := podsPerJob(rj)
		ready := min(s.Ready, s.Active)
		st.PodSets = append(st.PodSets, framework.PodSetStatus{
			Name:     rj.Name,
			Running:  ready * n,
			Pending:  max(s.Active-ready, 0) * n,
			Finished: s.Succeeded * n,
		})
	}
	return st
}
