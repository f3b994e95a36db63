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
	"sort"
	"strings"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

// Name is the extension's name.
const Name = "mpijob"

// order lists the replica types as their pod sets appear.
var order = []mpiv2.MPIReplicaType{mpiv2.MPIReplicaTypeLauncher, mpiv2.MPIReplicaTypeWorker}

// New describes the MPIJob extension.
func New(framework.ExtensionOptions) framework.Extension {
	gv := mpiv2.SchemeGroupVersion
	return framework.Typed(framework.Extension{
		Name: Name, GVK: gv.WithKind(mpiv2.Kind), CRD: "mpijobs." + gv.Group,
	}, Wrap)
}

// Job is an MPIJob seen by the queue.
type Job struct{ j *mpiv2.MPIJob }

var (
	_ framework.GenericJob    = (*Job)(nil)
	_ framework.StartReporter = (*Job)(nil)
)

// Wrap wraps an MPIJob.
func Wrap(j *mpiv2.MPIJob) *Job { return &Job{j: j} }

// Object returns the MPIJob.
func (w *Job) Object() client.Object { return w.j }

// Started: the operator set status.startTime (it clears it on suspension).
func (w *Job) Started() bool { return w.j.Status.StartTime != nil }

// IsSuspended reads spec.runPolicy.suspend, the field the mpi-operator obeys;
// the guide's suspend annotation alone holds nothing.
func (w *Job) IsSuspended() bool { return ptr.Deref(w.j.Spec.RunPolicy.Suspend, false) }

// Suspend sets spec.runPolicy.suspend: the operator deletes the launcher Job
// and the worker pods.
func (w *Job) Suspend() { w.j.Spec.RunPolicy.Suspend = ptr.To(true) }

// Resume clears spec.runPolicy.suspend and drops the suspend annotation.
func (w *Job) Resume() {
	w.j.Spec.RunPolicy.Suspend = ptr.To(false)
	if a := w.j.GetAnnotations(); a != nil {
		if _, ok := a[schedv1alpha1.SuspendAnnotation]; ok {
			delete(a, schedv1alpha1.SuspendAnnotation)
			w.j.SetAnnotations(a)
		}
	}
}

// replicaTypes lists the set replica types: Launcher, Worker, then any other
// sorted (the operator rejects others, but a unit still charges them).
func (w *Job) replicaTypes() []mpiv2.MPIReplicaType {
	specs := w.j.Spec.MPIReplicaSpecs
	var out, rest []mpiv2.MPIReplicaType
	known := map[mpiv2.MPIReplicaType]bool{}
	for _, t := range order {
		known[t] = true
		if specs[t] != nil {
			out = append(out, t)
		}
	}
	for t, s := range specs {
		if !known[t] && s != nil {
			rest = append(rest, t)
		}
	}
	sort.Slice(rest, func(a, b int) bool { return rest[a] < rest[b] })
	return append(out, rest...)
}

// PodSetName is the pod set of a replica type: its name in lower case.
func PodSetName(t mpiv2.MPIReplicaType) string { return strings.ToLower(string(t)) }

// PodSets is one set per replica type. The launcher is one pod (the operator
// runs it as a batch Job with parallelism 1); workers default to 0 replicas,
// as the operator's defaulting does, and a set of 0 is left out.
func (w *Job) PodSets() ([]framework.PodSet, error) {
	var sets []framework.PodSet
	for _, t := range w.replicaTypes() {
		s := w.j.Spec.MPIReplicaSpecs[t]
		count := ptr.Deref(s.Replicas, 0)
		if t == mpiv2.MPIReplicaTypeLauncher {
			count = 1
		}
		if count == 0 {
			continue
		}
		sets = append(sets, framework.PodSet{Name: PodSetName(t), Count: count, Template: *s.Template.DeepCopy()})
	}
	return sets, nil
}

// SetPodLabels labels the template of every replica spec.
func (w *Job) SetPodLabels(labels map[string]string) []framework.ReplacedLabel {
	var replaced []framework.ReplacedLabel
	for _, t := range w.replicaTypes() {
		s := w.j.Spec.MPIReplicaSpecs[t]
		where := "spec.mpiReplicaSpecs." + string(t) + ".template"
		replaced = append(replaced, framework.SetLabels(&s.Template.Labels, labels, where)...)
	}
	return replaced
}

// Status reads the Succeeded and Failed conditions and status.replicaStatuses
// (active pods run, succeeded ones are finished).
func (w *Job) Status() framework.JobStatus {
	var st framework.JobStatus
	for _, c := range w.j.Status.Conditions {
		framework.EndBy(&st, c.Type, c.Status, c.Message, mpiv2.JobSucceeded, mpiv2.JobFailed)
	}
	for _, t := range w.replicaTypes() {
		rs := w.j.Status.ReplicaStatuses[t]
		if rs == nil {
			continue
		}
		st.PodSets = append(st.PodSets, framework.PodSetStatus{Name: PodSetName(t), Running: rs.Active, Finished: rs.Succeeded})
	}
	return st
}
