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
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// GenericJob is one job of some kind, wrapped so the reconciler can queue it.
// Suspend and Resume change the wrapped object in memory only; the reconciler
// writes it.
type GenericJob interface {
	// Object is the wrapped job.
	Object() client.Object
	// IsSuspended reports whether the job is held by its native suspension
	// field, the one its stock operator obeys.
	IsSuspended() bool
	// Suspend holds the job by its native suspension field (and any older
	// form the kind also knows).
	Suspend()
	// Resume lets the job start its pods.
	Resume()
	// PodSets lists the job's groups of pods in a fixed order.
	PodSets() ([]PodSet, error)
	// Status is what the job says about its pods and its end.
	Status() JobStatus
	// SetPodLabels writes labels on every pod template of the job (in
	// memory, like Suspend) and returns the ones it found set to another
	// value.
	SetPodLabels(labels map[string]string) []ReplacedLabel
}

// PodSet is a group of identical pods of a job.
type PodSet struct {
	Name     string
	Count    int32
	MinCount *int32
	Template corev1.PodTemplateSpec
}

// PodSetStatus counts the pods of one pod set.
type PodSetStatus struct {
	Name     string
	Running  int32
	Pending  int32
	Finished int32
}

// JobStatus is what a job reports about its pods and its end.
type JobStatus struct {
	// PodSets counts pods per pod set; sets not listed have no pods.
	PodSets []PodSetStatus
	// Finished is true once the job ended; Failed tells how.
	Finished bool
	Failed   bool
	// Message explains the end, when the job gives one.
	Message string
}

// Running sums the running pods of every set.
func (s JobStatus) Running() int32 {
	var n int32
	for _, p := range s.PodSets {
		n += p.Running
	}
	return n
}

// Pending sums the pending pods of every set.
func (s JobStatus) Pending() int32 {
	var n int32
	for _, p := range s.PodSets {
		n += p.Pending
	}
	return n
}

// Active is the number of pods that still hold resources.
func (s JobStatus) Active() int32 { return s.Running() + s.Pending() }

// NeverManaged is an optional power: a job that reports true is never queued,
// not even with --manage-all-jobs (a RayCluster that belongs to a RayJob).
type NeverManaged interface {
	NeverManaged() bool
}

// QueueOptIn is an optional power for kinds whose held form names koord-queue
// itself (an Argo Workflow's koord-queue-suspend template): such a job asked
// to be queued, so it is managed like a job with a quota label, and its unit
// says it has no quota.
type QueueOptIn interface {
	OptsIn() bool
}

// StartReporter is an optional power for kinds that record when they started
// (a status.startTime): Started is true once the job ran, even if no pod is
// active at this moment. Kinds without it count as started while they have
// active pods.
type StartReporter interface {
	Started() bool
}

// PriorityClassSource is an optional power for kinds whose priority class is
// not in a pod template.
type PriorityClassSource interface {
	PriorityClassName() string
}

// Resolver is an optional power for kinds whose pods another object decides
// (a TrainJob's training runtime): the reconciler calls Resolve before
// PodSets. A *MissingError means the object is not there yet; any other
// error is a failed read.
type Resolver interface {
	Resolve(ctx context.Context, c client.Reader) error
}

// MissingError says a job's pods cannot be known yet: What (a kind and a
// name) does not exist. The reconciler says so in an event and waits for a
// Dependency watch to bring the job back; it changes neither the job nor a
// unit it already has.
type MissingError struct{ What string }

func (e *MissingError) Error() string { return fmt.Sprintf("%s not found", e.What) }

// LabelsApart is an optional power for kinds whose pod template labels may not
// change in the write that resumes the job (a TrainJob: the trainer's webhook
// refuses podTemplateOverrides edited on a running TrainJob). The reconciler
// writes the labels first, the job still suspended, then resumes it.
type LabelsApart interface {
	LabelsApart()
}

// Dependency is a kind of object the pods of an extension's jobs depend on:
// the reconciler watches it, and a change to one reconciles the jobs Jobs
// names (read through c, the manager's cache).
type Dependency struct {
	Object client.Object
	Jobs   func(ctx context.Context, c client.Reader, obj client.Object) []types.NamespacedName
}

// Extension describes one job kind.
type Extension struct {
	// Name is the extension's name in --enabled-extensions and the suffix of
	// its units' names.
	Name string
	// GVK is the job kind's group, version and kind.
	GVK schema.GroupVersionKind
	// CRD names the CustomResourceDefinition the kind needs, for the start-up
	// check; empty for built-in kinds.
	CRD string
	// BareUnitName gives units the job's own name, without the suffix.
	BareUnitName bool
	// NewObject returns an empty job of the kind.
	NewObject func() client.Object
	// Wrap wraps a job read from the API.
	Wrap func(client.Object) (GenericJob, error)
	// Claims, if set, says whether this extension rather than a sibling serves
	// a job (RayJob v1 and v1alpha1 share one stored resource).
	Claims func(client.Object) bool
	// HoldsPod, if set, says that a pod being created belongs to a job of
	// this kind that has no suspension field: the pod webhook adds
	// SchedulingGate to it, and the kind's reconciler removes it on admission.
	HoldsPod func(*corev1.Pod) bool
	// Dependencies are other kinds the jobs' pods depend on (see Resolver).
	Dependencies []Dependency
}

// SchedulingGate holds a queued pod until its unit is admitted: the pods of
// kinds without a suspension field (bare pods, LeaderWorkerSets).
const SchedulingGate = "koord-queue/admission"

// Gated reports whether the pod carries SchedulingGate.
func Gated(p *corev1.Pod) bool {
	for _, g := range p.Spec.SchedulingGates {
		if g.Name == SchedulingGate {
			return true
		}
	}
	return false
}

// Gate adds SchedulingGate to a pod (the API server takes it only at
// creation).
func Gate(p *corev1.Pod) {
	if !Gated(p) {
		p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: SchedulingGate})
	}
}

// Ungate removes SchedulingGate, leaving other gates.
func Ungate(p *corev1.Pod) {
	var kept []corev1.PodSchedulingGate
	for _, g := range p.Spec.SchedulingGates {
		if g.Name != SchedulingGate {
			kept = append(kept, g)
		}
	}
	p.Spec.SchedulingGates = kept
}

// ExtensionOptions is what a factory may look at.
type ExtensionOptions struct {
	// Enabled lists every enabled extension.
	Enabled []string
}

// Factory builds an extension.
type Factory func(ExtensionOptions) Extension

// Registry maps extension names to factories. It is built in one place (the
// app package); nothing registers itself.
type Registry map[string]Factory
