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

package foreign

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
)

// Pod is what the classification reads of a pod.
type Pod struct {
	Namespace, Name string
	// QuotaLabel and UnitLabel are the pod's quota.scheduling.koordinator.sh/name
	// and koord-queue/queue-unit labels ("" when absent).
	QuotaLabel, UnitLabel string
	// OwnerUID is the UID of the pod's controller ("" for none): a pod
	// that names no unit is its job's unit's when that job is its owner.
	OwnerUID    types.UID
	NodeName    string
	Phase       corev1.PodPhase
	Terminating bool
	Request     schedtypes.Resources
}

// FromPod reads a pod (slimmed or not).
func FromPod(p *corev1.Pod) Pod {
	return Pod{
		Namespace: p.Namespace, Name: p.Name,
		QuotaLabel: p.Labels[schedv1alpha1.QuotaNameLabel], UnitLabel: p.Labels[schedv1alpha1.QueueUnitLabel],
		OwnerUID: ownerUID(p), NodeName: p.Spec.NodeName, Phase: p.Status.Phase, Terminating: p.DeletionTimestamp != nil,
		Request: schedtypes.FromList(resources.PodRequests(&p.Spec)),
	}
}

// ownerUID is the UID of p's controller, "" when it has none.
func ownerUID(p *corev1.Pod) types.UID {
	if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
		return ref.UID
	}
	return ""
}

// Quota is what the classification reads of an ElasticQuota.
type Quota struct {
	Name, Namespace string
	// Namespaces is its quota.scheduling.koordinator.sh/namespaces list.
	Namespaces []string
}

// Index finds quotas the way koord-scheduler does for a pod.
type Index struct {
	byName map[string]Quota
	// byListed maps a namespace to the quotas that list it, by name.
	byListed map[string][]string
}

// NewIndex indexes quotas. Koordinator's own quotas may be among them.
func NewIndex(quotas []Quota) *Index {
	ix := &Index{byName: map[string]Quota{}, byListed: map[string][]string{}}
	for _, q := range quotas {
		ix.byName[q.Name] = q
		for _, ns := range q.Namespaces {
			ix.byListed[ns] = append(ix.byListed[ns], q.Name)
		}
	}
	for ns := range ix.byListed {
		slices.Sort(ix.byListed[ns])
	}
	return ix
}

// QuotaOf is the quota koord-scheduler charges pod p to: the quota its
// quota label names when that quota exists, the default quota when it
// does not; else a quota named like its namespace, in that namespace; else
// a quota whose namespaces annotation lists its namespace (the first by
// name when several do, where Koordinator takes any); else the default
// quota.
func (ix *Index) QuotaOf(p Pod) schedtypes.QuotaName {
	if p.QuotaLabel != "" {
		if _, ok := ix.byName[p.QuotaLabel]; ok || eqv1alpha1.IsSystemQuota(p.QuotaLabel) {
			return schedtypes.QuotaName(p.QuotaLabel)
		}
		return eqv1alpha1.DefaultQuotaName
	}
	if q, ok := ix.byName[p.Namespace]; ok && q.Namespace == p.Namespace {
		return schedtypes.QuotaName(q.Name)
	}
	if names := ix.byListed[p.Namespace]; len(names) > 0 {
		return schedtypes.QuotaName(names[0])
	}
	return eqv1alpha1.DefaultQuotaName
}

// Counts reports whether p uses resources now, as koord-scheduler counts
// them: bound to a node and not finished.
func (p Pod) Counts() bool {
	return p.NodeName != "" && p.Phase != corev1.PodSucceeded && p.Phase != corev1.PodFailed
}

// Unit is the QueueUnit the pod's unit label names, in the pod's
// namespace; "" when it has none.
func (p Pod) Unit() schedtypes.UnitKey {
	if p.UnitLabel == "" {
		return ""
	}
	return schedtypes.NewUnitKey(p.Namespace, p.UnitLabel)
}

// Charge is the quota p is counted against as foreign usage, or "" when it
// is not: it does not use resources now, it is charged to one of
// Koordinator's own quotas, or it is one of ours. holds reports whether a
// unit holds quota now (phase Reserved, Dequeued or Running): its pods are
// ours. A terminating pod that names a unit is ours too: its unit gave its
// quota back and the pod is on its way out; counting it would send the
// unit admitted into that room looking for more victims.
func (ix *Index) Charge(p Pod, holds func(schedtypes.UnitKey) bool) schedtypes.QuotaName {
	if !p.Counts() || p.Request.IsZero() {
		return ""
	}
	if key := p.Unit(); key != "" && (p.Terminating || holds(key)) {
		return ""
	}
	q := ix.QuotaOf(p)
	if eqv1alpha1.IsSystemQuota(string(q)) {
		return ""
	}
	return q
}

// Slim keeps of a pod only what FromPod reads, for the pod informer's
// transform: its name, namespace, UID, resourceVersion, the two labels,
// its controller's reference, deletion timestamp, node, phase, and its summed requests
// (resources.PodRequests) as the requests of one container, so that
// PodRequests of the slim pod is that of the full one. Anything else is
// returned as it is.
func Slim(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	out := &corev1.Pod{
		TypeMeta: p.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion,
			DeletionTimestamp: p.DeletionTimestamp,
		},
		Spec:   corev1.PodSpec{NodeName: p.Spec.NodeName},
		Status: corev1.PodStatus{Phase: p.Status.Phase},
	}
	if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
		out.OwnerReferences = []metav1.OwnerReference{*ref}
	}
	for _, k := range []string{schedv1alpha1.QuotaNameLabel, schedv1alpha1.QueueUnitLabel} {
		if v, ok := p.Labels[k]; ok {
			if out.Labels == nil {
				out.Labels = map[string]string{}
			}
			out.Labels[k] = v
		}
	}
	if req := resources.PodRequests(&p.Spec); len(req) > 0 {
		out.Spec.Containers = []corev1.Container{{Name: "requests", Resources: corev1.ResourceRequirements{Requests: req}}}
	}
	return out, nil
}
