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

package workflow

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

// Names the extension knows.
const (
	Name                   = "workflow"
	SuspendTemplate        = "koord-queue-suspend"
	MinResourcesAnnotation = "koord-queue/min-resources"
	PodSetName             = "workflow"
)

// GVK is the Workflow kind.
var GVK = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Workflow"}

// New describes the Workflow extension.
func New(framework.ExtensionOptions) framework.Extension {
	return framework.Typed(framework.Extension{Name: Name, GVK: GVK, CRD: "workflows.argoproj.io"}, Wrap)
}

// Workflow is an Argo Workflow seen by the queue.
type Workflow struct {
	u *unstructured.Unstructured
}

var (
	_ framework.GenericJob = (*Workflow)(nil)
	_ framework.QueueOptIn = (*Workflow)(nil)
)

// Wrap wraps a Workflow.
func Wrap(u *unstructured.Unstructured) *Workflow { return &Workflow{u: u} }

// Object returns the Workflow.
func (w *Workflow) Object() client.Object { return w.u }

// HasSuspendTemplate reports a koord-queue-suspend template with a suspend
// field in spec.templates or status.storedTemplates.
func (w *Workflow) HasSuspendTemplate() bool {
	templates, _, _ := unstructured.NestedSlice(w.u.Object, "spec", "templates")
	for _, t := range templates {
		if isSuspendTemplate(t) {
			return true
		}
	}
	stored, _, _ := unstructured.NestedMap(w.u.Object, "status", "storedTemplates")
	for _, t := range stored {
		if isSuspendTemplate(t) {
			return true
		}
	}
	return false
}

func isSuspendTemplate(t any) bool {
	m, ok := t.(map[string]any)
	if !ok || m["name"] != SuspendTemplate {
		return false
	}
	_, has := m["suspend"]
	return has
}

// nodes lists status.nodes.
func (w *Workflow) nodes() []map[string]any {
	raw, _, _ := unstructured.NestedMap(w.u.Object, "status", "nodes")
	out := make([]map[string]any, 0, len(raw))
	for _, n := range raw {
		if m, ok := n.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func runningSuspend(n map[string]any) bool { return n["type"] == "Suspend" && n["phase"] == "Running" }

func isQueueSuspendNode(n map[string]any) bool {
	return runningSuspend(n) && (n["templateName"] == SuspendTemplate || n["displayName"] == SuspendTemplate)
}

func (w *Workflow) specSuspend() bool {
	s, _, _ := unstructured.NestedBool(w.u.Object, "spec", "suspend")
	return s
}

// OptsIn: a koord-queue-suspend template asks for the queue even without a
// quota label.
func (w *Workflow) OptsIn() bool { return w.HasSuspendTemplate() }

// IsSuspended: spec.suspend, or a koord-queue-suspend node still running.
func (w *Workflow) IsSuspended() bool {
	if w.specSuspend() {
		return true
	}
	for _, n := range w.nodes() {
		if isQueueSuspendNode(n) {
			return true
		}
	}
	return false
}

// Suspend sets spec.suspend.
func (w *Workflow) Suspend() {
	_ = unstructured.SetNestedField(w.u.Object, true, "spec", "suspend")
}

// Resume clears spec.suspend and marks running koord-queue-suspend nodes
// Succeeded, as resuming a suspend node does in Argo.
func (w *Workflow) Resume() {
	_ = unstructured.SetNestedField(w.u.Object, false, "spec", "suspend")
	raw, found, _ := unstructured.NestedMap(w.u.Object, "status", "nodes")
	if !found {
		return
	}
	changed := false
	for id, n := range raw {
		m, ok := n.(map[string]any)
		if ok && isQueueSuspendNode(m) {
			m["phase"] = "Succeeded"
			m["message"] = "resumed by koord-queue"
			raw[id] = m
			changed = true
		}
	}
	if changed {
		_ = unstructured.SetNestedMap(w.u.Object, raw, "status", "nodes")
	}
}

// SetPodLabels labels spec.podMetadata.labels, which Argo puts on every pod
// of the workflow.
func (w *Workflow) SetPodLabels(labels map[string]string) []framework.ReplacedLabel {
	m, _, err := unstructured.NestedStringMap(w.u.Object, "spec", "podMetadata", "labels")
	if err != nil {
		return nil // not a map of strings: left for Argo to refuse
	}
	replaced := framework.SetLabels(&m, labels, "spec.podMetadata")
	_ = unstructured.SetNestedStringMap(w.u.Object, m, "spec", "podMetadata", "labels")
	return replaced
}

// MinResources parses the koord-queue/min-resources annotation, YAML or JSON.
func (w *Workflow) MinResources() (corev1.ResourceList, error) {
	v, ok := w.u.GetAnnotations()[MinResourcesAnnotation]
	if !ok {
		return corev1.ResourceList{}, nil
	}
	list := corev1.ResourceList{}
	if err := yaml.Unmarshal([]byte(v), &list); err != nil {
		return nil, fmt.Errorf("annotation %s is not a resource list: %w", MinResourcesAnnotation, err)
	}
	return list, nil
}

// PodSets is one pod asking for the workflow's min-resources.
func (w *Workflow) PodSets() ([]framework.PodSet, error) {
	req, err := w.MinResources()
	if err != nil {
		return nil, err
	}
	t := corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "min-resources", Resources: corev1.ResourceRequirements{Requests: req}}},
	}}
	if pc, _, _ := unstructured.NestedString(w.u.Object, "spec", "podPriorityClassName"); pc != "" {
		t.Spec.PriorityClassName = pc
	}
	if p, found, _ := unstructured.NestedInt64(w.u.Object, "spec", "podPriority"); found {
		v := int32(p)
		t.Spec.Priority = &v
	}
	return []framework.PodSet{{Name: PodSetName, Count: 1, Template: t}}, nil
}

// Status follows status.phase and counts the Pod nodes.
func (w *Workflow) Status() framework.JobStatus {
	var st framework.JobStatus
	phase, _, _ := unstructured.NestedString(w.u.Object, "status", "phase")
	msg, _, _ := unstructured.NestedString(w.u.Object, "status", "message")
	switch phase {
	case "Succeeded":
		st.Finished, st.Message = true, msg
		return st
	case "Failed", "Error":
		st.Finished, st.Failed, st.Message = true, true, msg
		return st
	}
	ps := framework.PodSetStatus{Name: PodSetName}
	for _, n := range w.nodes() {
		if n["type"] != "Pod" {
			continue
		}
		switch n["phase"] {
		case "Running":
			ps.Running++
		case "Pending":
			ps.Pending++
		}
	}
	st.PodSets = []framework.PodSetStatus{ps}
	return st
}
