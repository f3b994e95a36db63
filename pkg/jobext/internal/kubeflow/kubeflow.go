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
	"sort"
	"strings"

	kfv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

// Extension describes the extension of one kubeflow.org/v1 kind, given the
// extension's name, the kind, the plural of its resource and its wrapper.
func Extension[T any, PT interface {
	*T
	client.Object
}](name, kind, plural string, wrap func(PT) *Job) framework.Extension {
	gv := kfv1.SchemeGroupVersion
	return framework.Typed(framework.Extension{Name: name, GVK: gv.WithKind(kind), CRD: plural + "." + gv.Group}, wrap)
}

// Job is a kubeflow.org/v1 training job seen by the queue.
type Job struct {
	obj       client.Object
	specs     map[kfv1.ReplicaType]*kfv1.ReplicaSpec
	runPolicy *kfv1.RunPolicy
	status    *kfv1.JobStatus
	order     []kfv1.ReplicaType
}

var (
	_ framework.GenericJob    = (*Job)(nil)
	_ framework.StartReporter = (*Job)(nil)
)

// New wraps a training job: its object, replica specs, run policy, status and
// the order its replica types are listed in (unknown types follow, sorted).
func New(obj client.Object, specs map[kfv1.ReplicaType]*kfv1.ReplicaSpec, runPolicy *kfv1.RunPolicy, status *kfv1.JobStatus, order []kfv1.ReplicaType) *Job {
	return &Job{obj: obj, specs: specs, runPolicy: runPolicy, status: status, order: order}
}

// Object returns the job.
func (j *Job) Object() client.Object { return j.obj }

// Started: the training operator set status.startTime.
func (j *Job) Started() bool { return j.status.StartTime != nil }

// IsSuspended reads spec.runPolicy.suspend, the field the training operator
// obeys. The guide's annotation scheduling.x-k8s.io/suspend alone does not
// hold a job: the operator ignores it, so such a job is suspended by the
// field (by the webhook at creation, else by the reconciler).
func (j *Job) IsSuspended() bool { return ptr.Deref(j.runPolicy.Suspend, false) }

// Suspend sets spec.runPolicy.suspend.
func (j *Job) Suspend() { j.runPolicy.Suspend = ptr.To(true) }

// Resume clears spec.runPolicy.suspend and drops the suspend annotation.
func (j *Job) Resume() {
	j.runPolicy.Suspend = ptr.To(false)
	if a := j.obj.GetAnnotations(); a != nil {
		if _, ok := a[schedv1alpha1.SuspendAnnotation]; ok {
			delete(a, schedv1alpha1.SuspendAnnotation)
			j.obj.SetAnnotations(a)
		}
	}
}

// ReplicaTypes lists the job's replica types: the kind's order first, then
// any others sorted.
func (j *Job) ReplicaTypes() []kfv1.ReplicaType {
	out := make([]kfv1.ReplicaType, 0, len(j.specs))
	known := map[kfv1.ReplicaType]bool{}
	for _, t := range j.order {
		known[t] = true
		if j.specs[t] != nil {
			out = append(out, t)
		}
	}
	var rest []kfv1.ReplicaType
	for t, s := range j.specs {
		if !known[t] && s != nil {
			rest = append(rest, t)
		}
	}
	sort.Slice(rest, func(a, b int) bool { return rest[a] < rest[b] })
	return append(out, rest...)
}

// PodSetName is the pod set of a replica type: its name in lower case.
func PodSetName(t kfv1.ReplicaType) string { return strings.ToLower(string(t)) }

// PodSets is one set per replica type; replicas default to 1.
func (j *Job) PodSets() ([]framework.PodSet, error) {
	var sets []framework.PodSet
	for _, t := range j.ReplicaTypes() {
		s := j.specs[t]
		sets = append(sets, framework.PodSet{
			Name:     PodSetName(t),
			Count:    ptr.Deref(s.Replicas, 1),
			Template: *s.Template.DeepCopy(),
		})
	}
	return sets, nil
}

// Status reads the conditions and status.replicaStatuses (active pods run,
// succeeded ones are finished).
// SetPodLabels labels the template of every replica spec.
func (j *Job) SetPodLabels(labels map[string]string) []framework.ReplacedLabel {
	var replaced []framework.ReplacedLabel
	for _, t := range j.ReplicaTypes() {
		if s := j.specs[t]; s != nil {
			where := "spec.replicaSpecs." + string(t) + ".template"
			replaced = append(replaced, framework.SetLabels(&s.Template.Labels, labels, where)...)
		}
	}
	return replaced
}

func (j *Job) Status() framework.JobStatus {
	var st framework.JobStatus
	for _, c := range j.status.Conditions {
		framework.EndBy(&st, c.Type, c.Status, c.Message, kfv1.JobSucceeded, kfv1.JobFailed)
	}
	for _, t := range j.ReplicaTypes() {
		rs := j.status.ReplicaStatuses[t]
		if rs == nil {
			continue
		}
		st.PodSets = append(st.PodSets, framework.PodSetStatus{Name: PodSetName(t), Running: rs.Active, Finished: rs.Succeeded})
	}
	return st
}
