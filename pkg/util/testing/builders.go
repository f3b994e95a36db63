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

package testing

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
)

// QueueUnitWrapper builds a QueueUnit.
type QueueUnitWrapper struct{ schedv1alpha1.QueueUnit }

// MakeQueueUnit starts a unit that stands for a batch/v1 Job of the same name.
func MakeQueueUnit(name, namespace string) *QueueUnitWrapper {
	return &QueueUnitWrapper{schedv1alpha1.QueueUnit{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: schedv1alpha1.QueueUnitSpec{
			ConsumerRef: &corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Name: name, Namespace: namespace},
		},
	}}
}

// Obj returns the built unit.
func (w *QueueUnitWrapper) Obj() *schedv1alpha1.QueueUnit { return &w.QueueUnit }

// Quota sets the quota label.
func (w *QueueUnitWrapper) Quota(name string) *QueueUnitWrapper {
	return w.Label(schedv1alpha1.QuotaNameLabel, name)
}

// Label sets a label.
func (w *QueueUnitWrapper) Label(k, v string) *QueueUnitWrapper {
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[k] = v
	return w
}

// Annotation sets an annotation.
func (w *QueueUnitWrapper) Annotation(k, v string) *QueueUnitWrapper {
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[k] = v
	return w
}

// Queue sets spec.queue.
func (w *QueueUnitWrapper) Queue(name string) *QueueUnitWrapper {
	w.Spec.Queue = name
	return w
}

// Priority sets spec.priority.
func (w *QueueUnitWrapper) Priority(p int32) *QueueUnitWrapper {
	w.Spec.Priority = ptr.To(p)
	return w
}

// Request adds a quantity to spec.resource (and spec.request).
func (w *QueueUnitWrapper) Request(name corev1.ResourceName, quantity string) *QueueUnitWrapper {
	if w.Spec.Resource == nil {
		w.Spec.Resource = corev1.ResourceList{}
		w.Spec.Request = corev1.ResourceList{}
	}
	w.Spec.Resource[name] = resource.MustParse(quantity)
	w.Spec.Request[name] = resource.MustParse(quantity)
	return w
}

// PodSet adds a pod set of count pods, each requesting the given pairs
// (name, quantity, name, quantity...), and adds its total to spec.resource.
func (w *QueueUnitWrapper) PodSet(name string, count int32, requests ...string) *QueueUnitWrapper {
	req := corev1.ResourceList{}
	for i := 0; i+1 < len(requests); i += 2 {
		req[corev1.ResourceName(requests[i])] = resource.MustParse(requests[i+1])
	}
	w.Spec.PodSet = append(w.Spec.PodSet, schedv1alpha1.PodSet{
		Name:  name,
		Count: count,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: req},
		}}}},
	})
	if w.Spec.Resource == nil {
		w.Spec.Resource = corev1.ResourceList{}
	}
	for r, q := range req {
		total := w.Spec.Resource[r]
		for range count {
			total.Add(q)
		}
		w.Spec.Resource[r] = total
	}
	return w
}

// Active sets spec.active.
func (w *QueueUnitWrapper) Active(a bool) *QueueUnitWrapper {
	w.Spec.Active = ptr.To(a)
	return w
}

// Created sets the creation timestamp (for pure tests; the API server sets its own).
func (w *QueueUnitWrapper) Created(t time.Time) *QueueUnitWrapper {
	w.CreationTimestamp = metav1.NewTime(t)
	return w
}

// Phase sets status.phase.
func (w *QueueUnitWrapper) Phase(p schedv1alpha1.QueueUnitPhase) *QueueUnitWrapper {
	w.Status.Phase = p
	return w
}

// ConsumerRef replaces the consumer reference.
func (w *QueueUnitWrapper) ConsumerRef(apiVersion, kind, name string) *QueueUnitWrapper {
	w.Spec.ConsumerRef = &corev1.ObjectReference{APIVersion: apiVersion, Kind: kind, Name: name, Namespace: w.Namespace}
	return w
}

// QueueWrapper builds a Queue.
type QueueWrapper struct{ schedv1alpha1.Queue }

// MakeQueue starts a Priority queue of priority 1000 in namespace koord-queue.
func MakeQueue(name string) *QueueWrapper {
	return &QueueWrapper{schedv1alpha1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "koord-queue"},
		Spec:       schedv1alpha1.QueueSpec{QueuePolicy: schedv1alpha1.QueuePolicyPriority, Priority: ptr.To[int32](1000)},
	}}
}

// Obj returns the built queue.
func (w *QueueWrapper) Obj() *schedv1alpha1.Queue { return &w.Queue }

// Policy sets spec.queuePolicy.
func (w *QueueWrapper) Policy(p schedv1alpha1.QueuePolicy) *QueueWrapper {
	w.Spec.QueuePolicy = p
	return w
}

// Priority sets spec.priority.
func (w *QueueWrapper) Priority(p int32) *QueueWrapper {
	w.Spec.Priority = ptr.To(p)
	return w
}

// Annotation sets an annotation.
func (w *QueueWrapper) Annotation(k, v string) *QueueWrapper {
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[k] = v
	return w
}

// AdmissionCheck adds a required check; labels, if given, become a matchLabels selector.
func (w *QueueWrapper) AdmissionCheck(name string, matchLabels map[string]string) *QueueWrapper {
	c := schedv1alpha1.AdmissionCheckWithSelector{Name: name}
	if matchLabels != nil {
		c.LabelSelector = &metav1.LabelSelector{MatchLabels: matchLabels}
	}
	w.Spec.AdmissionChecks = append(w.Spec.AdmissionChecks, c)
	return w
}

// ElasticQuotaWrapper builds an ElasticQuota.
type ElasticQuotaWrapper struct{ eqv1alpha1.ElasticQuota }

// MakeElasticQuota starts a quota in namespace default, child of the root.
func MakeElasticQuota(name string) *ElasticQuotaWrapper {
	return &ElasticQuotaWrapper{eqv1alpha1.ElasticQuota{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
	}}
}

// Obj returns the built quota.
func (w *ElasticQuotaWrapper) Obj() *eqv1alpha1.ElasticQuota { return &w.ElasticQuota }

// Namespace sets the namespace.
func (w *ElasticQuotaWrapper) Namespace(ns string) *ElasticQuotaWrapper {
	w.ObjectMeta.Namespace = ns
	return w
}

// Max sets spec.max[name].
func (w *ElasticQuotaWrapper) Max(name corev1.ResourceName, quantity string) *ElasticQuotaWrapper {
	if w.Spec.Max == nil {
		w.Spec.Max = corev1.ResourceList{}
	}
	w.Spec.Max[name] = resource.MustParse(quantity)
	return w
}

// Min sets spec.min[name].
func (w *ElasticQuotaWrapper) Min(name corev1.ResourceName, quantity string) *ElasticQuotaWrapper {
	if w.Spec.Min == nil {
		w.Spec.Min = corev1.ResourceList{}
	}
	w.Spec.Min[name] = resource.MustParse(quantity)
	return w
}

// Parent sets the parent label; IsParent marks a quota with children.
func (w *ElasticQuotaWrapper) Parent(name string) *ElasticQuotaWrapper {
	return w.Label(eqv1alpha1.ParentLabel, name)
}

// IsParent sets the is-parent label.
func (w *ElasticQuotaWrapper) IsParent(b bool) *ElasticQuotaWrapper {
	v := "false"
	if b {
		v = "true"
	}
	return w.Label(eqv1alpha1.IsParentLabel, v)
}

// Policy sets the koord-queue/queue-policy label.
func (w *ElasticQuotaWrapper) Policy(p schedv1alpha1.QueuePolicy) *ElasticQuotaWrapper {
	return w.Label(schedv1alpha1.QueuePolicyLabel, string(p))
}

// Label sets a label.
func (w *ElasticQuotaWrapper) Label(k, v string) *ElasticQuotaWrapper {
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[k] = v
	return w
}

// Annotation sets an annotation.
func (w *ElasticQuotaWrapper) Annotation(k, v string) *ElasticQuotaWrapper {
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[k] = v
	return w
}
