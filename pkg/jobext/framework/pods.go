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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// The reconciler's view of pods: a slim copy of each in the manager's cache
// (TrimPod), found by the job that controls them (podOwnerIndex, for the
// pods-gone finalizer) and by the unit their label names (podUnitIndex, for
// what koord-scheduler and evictions do to them).

// podOwnerIndex prefixes the per-extension index of pods by the UID of their
// controller, when that controller is of the extension's kind.
const podOwnerIndex = "koord-queue.controllerUID/"

// podUnitIndex prefixes the per-extension index of pods by their
// koord-queue/queue-unit label: the pods of a unit, whoever controls them (a
// RayJob's pods belong to its RayCluster, Spark executors to the driver pod).
const podUnitIndex = "koord-queue.queueUnit/"

// TrimPod is the cache transform of Pods in koord-queue-controllers (the
// manager's cache.Options.ByObject): it keeps what the reconcilers read and
// drops the rest, the spec above all, so a cluster's pods cost little memory.
// Kept: name, namespace, UID, resourceVersion, labels, owner references and
// deletionTimestamp; spec.schedulingGates (a held pod's gate); status.phase and status.reason, status.message of a
// failed pod (why it was evicted), and the conditions PodScheduled and
// DisruptionTarget. Anything that is not a *corev1.Pod passes unchanged, and
// so does a pod the pod extension may queue (KeepWhole): it reads their
// spec. It returns a new object and may be applied twice.
func TrimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || KeepWhole(pod) {
		return obj, nil
	}
	slim := &corev1.Pod{
		TypeMeta: pod.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name:              pod.Name,
			Namespace:         pod.Namespace,
			UID:               pod.UID,
			ResourceVersion:   pod.ResourceVersion,
			Labels:            pod.Labels,
			OwnerReferences:   pod.OwnerReferences,
			DeletionTimestamp: pod.DeletionTimestamp,
		},
		Spec:   corev1.PodSpec{SchedulingGates: pod.Spec.SchedulingGates},
		Status: corev1.PodStatus{Phase: pod.Status.Phase, Reason: pod.Status.Reason},
	}
	if pod.Status.Phase == corev1.PodFailed {
		slim.Status.Message = pod.Status.Message
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled || c.Type == corev1.DisruptionTarget {
			slim.Status.Conditions = append(slim.Status.Conditions, corev1.PodCondition{
				Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message, LastTransitionTime: c.LastTransitionTime,
			})
		}
	}
	return slim, nil
}

// KeepWhole reports a pod the cache keeps whole: one that carries the quota
// label and has no controller, which only the pod extension queues.
func KeepWhole(pod *corev1.Pod) bool {
	return pod.Labels[schedv1alpha1.QuotaNameLabel] != "" && metav1.GetControllerOf(pod) == nil
}

// ownedByKind is the pod's controller owner reference when it is of this
// extension's kind.
func (r *Reconciler) ownedByKind(obj client.Object) *metav1.OwnerReference {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != r.ext.GVK.Kind || ref.APIVersion != r.ext.GVK.GroupVersion().String() {
		return nil
	}
	return ref
}

// indexPods adds the extension's two pod indexes to the cache.
func (r *Reconciler) indexPods(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &corev1.Pod{}, podOwnerIndex+r.ext.Name, func(obj client.Object) []string {
		if ref := r.ownedByKind(obj); ref != nil {
			return []string{string(ref.UID)}
		}
		return nil
	}); err != nil {
		return err
	}
	return indexer.IndexField(ctx, &corev1.Pod{}, podUnitIndex+r.ext.Name, podUnitName)
}

// podUnitName is the unit a pod's label names, as an index value.
func podUnitName(obj client.Object) []string {
	if name := obj.GetLabels()[schedv1alpha1.QueueUnitLabel]; name != "" {
		return []string{name}
	}
	return nil
}

// unitPods lists the pods labelled with the unit's name, from the cache and
// not copied: callers only read them.
func (r *Reconciler) unitPods(ctx context.Context, unit *schedv1alpha1.QueueUnit) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := r.client.List(ctx, list, client.InNamespace(unit.Namespace),
		client.MatchingFields{podUnitIndex + r.ext.Name: unit.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list pods of queue unit: %w", err)
	}
	return list.Items, nil
}

// podToJob maps a pod to the job that controls it, whose deleted unit may
// wait for it, and to the job whose unit its label names.
func (r *Reconciler) podToJob(ctx context.Context, obj client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	if ref := r.ownedByKind(obj); ref != nil {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}})
	}
	if name := obj.GetLabels()[schedv1alpha1.QueueUnitLabel]; name != "" {
		unit := &schedv1alpha1.QueueUnit{}
		if err := r.client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}, unit); err == nil {
			for _, req := range r.unitToJob(ctx, unit) {
				if len(reqs) == 0 || reqs[0] != req {
					reqs = append(reqs, req)
				}
			}
		}
	}
	return reqs
}

// podSignal is what a reconcile reads of a pod: a pod event that leaves it
// alone changes nothing the reconciler decides.
type podSignal struct {
	phase     corev1.PodPhase
	scheduled corev1.ConditionStatus
	refused   bool
	evicted   bool
}

func signalOf(obj client.Object) podSignal {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return podSignal{}
	}
	s := podSignal{phase: pod.Status.Phase}
	if c := podCondition(pod, corev1.PodScheduled); c != nil {
		s.scheduled = c.Status
		s.refused = c.Status == corev1.ConditionFalse && RefusedForQuota(c.Reason, c.Message)
	}
	_, _, s.evicted = evictionOf(pod)
	return s
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// podEvents passes the pod events a reconcile acts on: a pod created already
// refused or evicted (the cache filling at start), a change of phase,
// PodScheduled, refusal for quota or eviction, a change of controller (the
// garbage collector orphaning the pods of a job deleted with propagation
// Orphan: its deleted unit need not wait for them), and every deletion (a
// deleted unit waits for its job's pods).
func podEvents() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool {
			s := signalOf(e.Object)
			return s.refused || s.evicted
		},
		UpdateFunc: func(e event.UpdateEvent) bool {
			return podOrphaned(e) || signalOf(e.ObjectOld) != signalOf(e.ObjectNew)
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
