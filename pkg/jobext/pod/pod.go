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

package pod

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

// Name is the extension's name; a single pod's unit is "<pod>-pod".
const Name = "pod"

// GroupUnitSuffix ends the name of a group's unit: "<group>-podgroup".
const GroupUnitSuffix = "podgroup"

const (
	// SchedulingGate holds a queued pod until its unit is admitted.
	SchedulingGate = framework.SchedulingGate
	// GroupLabel names the group a pod belongs to; its members share one
	// unit, admitted whole.
	GroupLabel = "koord-queue/pod-group"
	// GroupCountAnnotation is the number of pods of the group, the same on
	// every member.
	GroupCountAnnotation = "koord-queue/pod-group-total-count"
)

// New describes the Pod extension.
func New(framework.ExtensionOptions) framework.Extension {
	return framework.Typed(framework.Extension{
		Name: Name, GVK: corev1.SchemeGroupVersion.WithKind("Pod"),
	}, Wrap)
}

// Pod is a pod seen by the queue.
type Pod struct{ p *corev1.Pod }

var (
	_ framework.GenericJob   = (*Pod)(nil)
	_ framework.NeverManaged = (*Pod)(nil)
)

// Wrap wraps a pod.
func Wrap(p *corev1.Pod) *Pod { return &Pod{p: p} }

// Object returns the pod.
func (w *Pod) Object() client.Object { return w.p }

// Opted is the one rule of which pods are queued: a pod with the quota label
// and no controller (pods of Jobs, MPIJobs, ReplicaSets... are their
// controller's business), outside kube-system.
func Opted(p *corev1.Pod) bool {
	return p.Labels[schedv1alpha1.QuotaNameLabel] != "" && metav1.GetControllerOf(p) == nil && p.Namespace != metav1.NamespaceSystem
}

// NeverManaged: pods are opt-in only, --manage-all-jobs takes none.
func (w *Pod) NeverManaged() bool { return !Opted(w.p) }

// IsSuspended reports the queue's scheduling gate.
func (w *Pod) IsSuspended() bool { return Gated(w.p) }

// Gated reports whether the pod carries the queue's scheduling gate.
func Gated(p *corev1.Pod) bool { return framework.Gated(p) }

// Suspend adds the scheduling gate. The API server takes it only at
// creation (the webhook); afterwards gates can only be removed.
func (w *Pod) Suspend() { framework.Gate(w.p) }

// Resume removes the scheduling gate.
func (w *Pod) Resume() { Ungate(w.p) }

// Ungate removes the queue's scheduling gate, leaving others.
func Ungate(p *corev1.Pod) { framework.Ungate(p) }

// PodSets is the pod itself, one set of one.
func (w *Pod) PodSets() ([]framework.PodSet, error) {
	return []framework.PodSet{{Name: "main", Count: 1, Template: templateOf(w.p)}}, nil
}

// SetPodLabels labels the pod itself. The unit label names the pod's own
// unit: its group's, for a member of a group.
func (w *Pod) SetPodLabels(labels map[string]string) []framework.ReplacedLabel {
	own := make(map[string]string, len(labels))
	for k, v := range labels {
		own[k] = v
	}
	if _, ok := own[schedv1alpha1.QueueUnitLabel]; ok || w.p.Labels[GroupLabel] != "" {
		if name := UnitNameOf(w.p); name != "" {
			own[schedv1alpha1.QueueUnitLabel] = name
		}
	}
	return framework.SetLabels(&w.p.Labels, own, "metadata")
}

// Status reads the pod's phase.
func (w *Pod) Status() framework.JobStatus {
	var st framework.JobStatus
	ps := framework.PodSetStatus{Name: "main"}
	count(&ps, w.p)
	st.PodSets = []framework.PodSetStatus{ps}
	switch w.p.Status.Phase {
	case corev1.PodSucceeded:
		st.Finished = true
	case corev1.PodFailed:
		st.Finished, st.Failed, st.Message = true, true, w.p.Status.Message
	}
	return st
}

func count(ps *framework.PodSetStatus, p *corev1.Pod) {
	switch p.Status.Phase {
	case corev1.PodRunning:
		ps.Running++
	case corev1.PodSucceeded, corev1.PodFailed:
		ps.Finished++
	default:
		if !Gated(p) {
			ps.Pending++
		}
	}
}

// templateOf is the pod's spec as a template, its labels and annotations.
func templateOf(p *corev1.Pod) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: p.Labels, Annotations: p.Annotations},
		Spec:       *p.Spec.DeepCopy(),
	}
}

// UnitNameOf names the unit of a pod: "<group>-podgroup" for a member of a
// group, "<pod>-pod" otherwise; "" for a pod with no name yet.
func UnitNameOf(p *corev1.Pod) string {
	ext := &framework.Extension{Name: Name}
	if g := p.Labels[GroupLabel]; g != "" {
		ext.Name = GroupUnitSuffix
		return framework.UnitName(ext, g)
	}
	if p.Name == "" {
		return ""
	}
	return framework.UnitName(ext, p.Name)
}

// GroupCount reads a member's total-count annotation.
func GroupCount(p *corev1.Pod) (int, error) {
	v, ok := p.Annotations[GroupCountAnnotation]
	if !ok {
		return 0, fmt.Errorf("pod %s of group %s has no annotation %s (the number of pods of the group)", p.Name, p.Labels[GroupLabel], GroupCountAnnotation)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("pod %s: annotation %s=%q is not a positive whole number", p.Name, GroupCountAnnotation, v)
	}
	return n, nil
}
