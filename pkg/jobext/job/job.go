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
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

// Name is the extension's name.
const Name = "job"

// PodSetName is the name of a Job's single pod set.
const PodSetName = "main"

// New describes the batch/v1 Job extension.
func New(framework.ExtensionOptions) framework.Extension {
	return framework.Typed(framework.Extension{
		Name:         Name,
		GVK:          batchv1.SchemeGroupVersion.WithKind("Job"),
		BareUnitName: true,
	}, Wrap)
}

// Job is a batch/v1 Job seen by the queue.
type Job struct {
	job *batchv1.Job
}

// Wrap wraps a Job.
func Wrap(j *batchv1.Job) *Job { return &Job{job: j} }

var (
	_ framework.GenericJob    = (*Job)(nil)
	_ framework.StartReporter = (*Job)(nil)
	_ framework.NeverManaged  = (*Job)(nil)
)

// NeverManaged: the launcher Job of an MPIJob, or a Job of a JobSet. Their
// operators create them, suspended while the owner is, and the owner's unit
// already charges them.
func (j *Job) NeverManaged() bool {
	c := metav1.GetControllerOf(j.job)
	if c == nil {
		return false
	}
	return c.Kind == "MPIJob" && strings.HasPrefix(c.APIVersion, "kubeflow.org/") ||
		c.Kind == "JobSet" && strings.HasPrefix(c.APIVersion, "jobset.x-k8s.io/")
}

// Object returns the Job.
func (j *Job) Object() client.Object { return j.job }

// Started: the Job controller set status.startTime.
func (j *Job) Started() bool { return j.job.Status.StartTime != nil }

// IsSuspended reads spec.suspend.
func (j *Job) IsSuspended() bool { return ptr.Deref(j.job.Spec.Suspend, false) }

// Suspend sets spec.suspend; the Job controller then deletes the pods.
func (j *Job) Suspend() { j.job.Spec.Suspend = ptr.To(true) }

// Resume clears spec.suspend.
func (j *Job) Resume() { j.job.Spec.Suspend = ptr.To(false) }

// SetPodLabels labels spec.template; a Job's template may change only while
// it is suspended, so the reconciler calls it before Resume.
func (j *Job) SetPodLabels(labels map[string]string) []framework.ReplacedLabel {
	return framework.SetLabels(&j.job.Spec.Template.Labels, labels, "spec.template")
}

// Count is how many pods the Job runs at once: min(parallelism, completions),
// parallelism defaulting to 1 and unset completions meaning no cap.
func (j *Job) Count() int32 {
	return framework.JobPodsAtOnce(&j.job.Spec)
}

// PodSets is the Job's one pod set.
func (j *Job) PodSets() ([]framework.PodSet, error) {
	return []framework.PodSet{{
		Name:     PodSetName,
		Count:    j.Count(),
		Template: *j.job.Spec.Template.DeepCopy(),
	}}, nil
}

// Status reads the Job's counters: ready pods run, the other active ones
// wait (terminating ones still hold resources), and succeeded pods beyond
// what the remaining completions need give their quota back.
func (j *Job) Status() framework.JobStatus {
	st := framework.JobStatus{}
	for _, c := range j.job.Status.Conditions {
		framework.EndBy(&st, c.Type, c.Status, c.Message, batchv1.JobComplete, batchv1.JobFailed)
	}
	active := j.job.Status.Active
	running := ptr.Deref(j.job.Status.Ready, active)
	running = min(running, active)
	pending := active - running + ptr.Deref(j.job.Status.Terminating, 0)
	st.PodSets = []framework.PodSetStatus{{
		Name:     PodSetName,
		Running:  running,
		Pending:  pending,
		Finished: j.reclaimable(),
	}}
	return st
}

// reclaimable is how many of the Job's pods are no longer needed: once fewer
// completions remain than the Job runs at once, the difference is free.
func (j *Job) reclaimable() int32 {
	if j.job.Spec.Completions == nil {
		return 0
	}
	remaining := max(*j.job.Spec.Completions-j.job.Status.Succeeded, 0)
	return max(j.Count()-remaining, 0)
}
