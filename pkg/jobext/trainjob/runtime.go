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

package trainjob

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	trainerv1 "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

// Names the trainer v2.1.0 gives meaning to (its pkg/constants): the label
// that marks a replicated job's step, the steps, and the name of the
// trainer's container and of the MPI runtime's worker job.
const (
	ancestorLabel      = "trainer.kubeflow.org/trainjob-ancestor-step"
	ancestorTrainer    = "trainer"
	datasetInitializer = "dataset-initializer"
	modelInitializer   = "model-initializer"
	node               = "node"
)

// replicatedJob is one replicated job of the JobSet the trainer makes.
type replicatedJob struct {
	name       string
	replicas   int32 // Jobs
	podsPerJob int32 // parallelism = completions
	template   corev1.PodTemplateSpec
}

// replicatedJobs is the resolved runtime's JobSet template as the trainer
// v2.1.0 controller turns it into a JobSet for this TrainJob (its runtime
// core and its jobset, plainml, torch and mpi plugins):
//   - spec.podTemplateOverrides are merged, in order, into the pod templates
//     of the jobs they target, by strategic merge as the trainer does;
//   - a job's pods are its template's parallelism (1 unset), or for the
//     trainer step (label trainjob-ancestor-step=trainer) the runtime's
//     mlPolicy.numNodes when it has an mlPolicy; spec.trainer.numNodes
//     replaces that of the first trainer step, or under an MPI policy that
//     of the job named node (one less, at least 1, when the launcher runs as
//     a node); parallelism and completions are both set to it;
//   - the trainer and initializer steps run one Job, other jobs their
//     replicas (1 unset);
//   - spec.trainer.resourcesPerNode, when it has limits or requests,
//     replaces the resources of the container named node in the trainer step
//     (and in the job named node when an MPI launcher runs as a node).
//
// Image, command, env, volumes and ports the trainer also sets change no
// request and are left out.
func (w *Job) replicatedJobs() ([]replicatedJob, error) {
	if w.badRef != nil {
		return nil, w.badRef
	}
	if w.runtime == nil {
		return nil, errors.New("its training runtime is not resolved yet")
	}
	rt := w.runtime
	spec := rt.Template.Spec.DeepCopy()
	for i := range w.tj.Spec.PodTemplateOverrides {
		o := &w.tj.Spec.PodTemplateOverrides[i]
		for j := range spec.ReplicatedJobs {
			rj := &spec.ReplicatedJobs[j]
			if !slices.ContainsFunc(o.TargetJobs, func(t trainerv1.PodTemplateOverrideTargetJob) bool { return t.Name == rj.Name }) {
				continue
			}
			merged, err := override(&rj.Template.Spec.Template, o)
			if err != nil {
				return nil, fmt.Errorf("spec.podTemplateOverrides[%d] on job %s: %w", i, rj.Name, err)
			}
			rj.Template.Spec.Template = merged
		}
	}
	mpi := rt.MLPolicy != nil && rt.MLPolicy.MPI != nil
	launcherAsNode := mpi && ptr.Deref(rt.MLPolicy.MPI.RunLauncherAsNode, false)
	tr := w.tj.Spec.Trainer
	trainerSeen := false
	out := make([]replicatedJob, 0, len(spec.ReplicatedJobs))
	for i := range spec.ReplicatedJobs {
		rj := &spec.ReplicatedJobs[i]
		if rj.Name == "" {
			return nil, fmt.Errorf("the runtime's spec.template.spec.replicatedJobs[%d] has no name", i)
		}
		ancestor := rj.Template.Labels[ancestorLabel]
		count := ptr.Deref(rj.Template.Spec.Parallelism, 1)
		if ancestor == ancestorTrainer && rt.MLPolicy != nil {
			count = ptr.Deref(rt.MLPolicy.NumNodes, 1)
		}
		if tr != nil && tr.NumNodes != nil {
			switch {
			case mpi && rj.Name == node:
				count = *tr.NumNodes
				if launcherAsNode {
					count = max(*tr.NumNodes-1, 1)
				}
			case !mpi && ancestor == ancestorTrainer && !trainerSeen:
				count = *tr.NumNodes
			}
		}
		trainerSeen = trainerSeen || ancestor == ancestorTrainer
		replicas := max(rj.Replicas, 1)
		switch ancestor {
		case ancestorTrainer, datasetInitializer, modelInitializer:
			replicas = 1
		}
		pod := rj.Template.Spec.Template
		if (ancestor == ancestorTrainer || launcherAsNode && rj.Name == node) && tr != nil && tr.ResourcesPerNode != nil &&
			(tr.ResourcesPerNode.Limits != nil || tr.ResourcesPerNode.Requests != nil) {
			for c := range pod.Spec.Containers {
				if pod.Spec.Containers[c].Name == node {
					pod.Spec.Containers[c].Resources = corev1.ResourceRequirements{
						Limits:   tr.ResourcesPerNode.Limits.DeepCopy(),
						Requests: tr.ResourcesPerNode.Requests.DeepCopy(),
					}
				}
			}
		}
		out = append(out, replicatedJob{name: rj.Name, replicas: replicas, podsPerJob: max(count, 0), template: pod})
	}
	return out, nil
}

// override merges one podTemplateOverride into a pod template as the
// trainer does: its metadata's labels and annotations and its spec, by
// strategic merge patch.
func override(template *corev1.PodTemplateSpec, o *trainerv1.PodTemplateOverride) (corev1.PodTemplateSpec, error) {
	patch := map[string]any{}
	if o.Metadata != nil {
		meta := map[string]any{}
		if o.Metadata.Labels != nil {
			meta["labels"] = o.Metadata.Labels
		}
		if o.Metadata.Annotations != nil {
			meta["annotations"] = o.Metadata.Annotations
		}
		if len(meta) > 0 {
			patch["metadata"] = meta
		}
	}
	if o.Spec != nil {
		patch["spec"] = o.Spec
	}
	var merged corev1.PodTemplateSpec
	source, err := json.Marshal(template)
	if err != nil {
		return merged, err
	}
	raw, err := json.Marshal(patch)
	if err != nil {
		return merged, err
	}
	out, err := strategicpatch.StrategicMergePatch(source, raw, corev1.PodTemplateSpec{})
	if err != nil {
		return merged, err
	}
	err = json.Unmarshal(out, &merged)
	return merged, err
}

// SetPodLabels puts the labels on every pod through a podTemplateOverride of
// its own, the last one, targeting every job of the resolved runtime (a
// TrainJob has no pod template of its own). That override is told apart as
// one with metadata labels only, all of them keys koord-queue writes. A
// runtime template or another override setting one of the labels to another
// value is reported: the last override wins. Without a resolved runtime (the
// webhook) nothing is written; the reconciler labels the TrainJob before
// resuming it.
func (w *Job) SetPodLabels(labels map[string]string) []framework.ReplacedLabel {
	if w.runtime == nil || len(labels) == 0 {
		return nil
	}
	var replaced []framework.ReplacedLabel
	targets := make([]trainerv1.PodTemplateOverrideTargetJob, 0, len(w.runtime.Template.Spec.ReplicatedJobs))
	for _, rj := range w.runtime.Template.Spec.ReplicatedJobs {
		targets = append(targets, trainerv1.PodTemplateOverrideTargetJob{Name: rj.Name})
		replaced = append(replaced, differing(rj.Template.Spec.Template.Labels, labels, fmt.Sprintf("runtime job %s pod template", rj.Name))...)
	}
	kept := make([]trainerv1.PodTemplateOverride, 0, len(w.tj.Spec.PodTemplateOverrides)+1)
	for i, o := range w.tj.Spec.PodTemplateOverrides {
		if ours(&o) {
			continue
		}
		if o.Metadata != nil {
			replaced = append(replaced, differing(o.Metadata.Labels, labels, fmt.Sprintf("spec.podTemplateOverrides[%d].metadata", i))...)
		}
		kept = append(kept, o)
	}
	o := trainerv1.PodTemplateOverride{TargetJobs: targets}
	o.Metadata = &metav1.ObjectMeta{Labels: maps.Clone(labels)}
	w.tj.Spec.PodTemplateOverrides = append(kept, o)
	return replaced
}

// ours tells koord-queue's override: metadata labels only, all of them keys
// koord-queue writes.
func ours(o *trainerv1.PodTemplateOverride) bool {
	if o.Spec != nil || o.Metadata == nil || len(o.Metadata.Annotations) > 0 || len(o.Metadata.Labels) == 0 {
		return false
	}
	for k := range o.Metadata.Labels {
		if k != schedv1alpha1.QuotaNameLabel && k != schedv1alpha1.QueueUnitLabel {
			return false
		}
	}
	return true
}

// differing reports the labels m sets to another value, as SetLabels would,
// leaving m as it is.
func differing(m, labels map[string]string, where string) []framework.ReplacedLabel {
	c := maps.Clone(m)
	return framework.SetLabels(&c, labels, where)
}
