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
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// PodsGoneFinalizer holds a deleted unit, and with it its quota charge, until
// the pods its job owns are gone: pods in their termination grace period still
// hold their node's resources.
const PodsGoneFinalizer = "scheduling.x-k8s.io/pods-gone"

// podOrphaned passes a pod update that changed the pod's controller (the
// garbage collector orphans the pods of a job deleted with propagation
// Orphan): the job no longer owns the pod, so its deleted unit need not wait.
// The map function sees the old pod too, so it finds the job.
func podOrphaned(e event.UpdateEvent) bool {
	before, after := metav1.GetControllerOf(e.ObjectOld), metav1.GetControllerOf(e.ObjectNew)
	return before != nil && (after == nil || after.UID != before.UID)
}

// podsLeft counts the pods in ns whose controller is the job of uid.
func (r *Reconciler) podsLeft(ctx context.Context, ns string, uid types.UID) (int, error) {
	list := &corev1.PodList{}
	if err := r.client.List(ctx, list, client.InNamespace(ns), client.MatchingFields{podOwnerIndex + r.ext.Name: string(uid)},
		client.UnsafeDisableDeepCopy); err != nil {
		return 0, fmt.Errorf("list pods: %w", err)
	}
	return len(list.Items), nil
}

// ensureFinalizer puts PodsGoneFinalizer on a unit (units created before it
// existed get it at their next sync). It reports whether it changed unit.
func ensureFinalizer(unit client.Object) bool {
	if unit.GetDeletionTimestamp() != nil {
		return false
	}
	return controllerutil.AddFinalizer(unit, PodsGoneFinalizer)
}

// releaseWhenPodsGone lets a deleted unit go once its job's pods are gone;
// until then the unit, and the quota it is charged, stay. A pod's deletion
// brings the job back here.
func (r *Reconciler) releaseWhenPodsGone(ctx context.Context, unit client.Object, uid types.UID) error {
	if !controllerutil.ContainsFinalizer(unit, PodsGoneFinalizer) {
		return nil
	}
	n, err := r.podsLeft(ctx, unit.GetNamespace(), uid)
	if err != nil {
		return err
	}
	if n > 0 {
		ctrl.LoggerFrom(ctx).V(2).Info("Deleted queue unit waits for its job's pods", "queueUnit", klog.KObj(unit), "pods", n)
		return nil
	}
	before, ok := unit.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("unit %T does not copy", unit)
	}
	controllerutil.RemoveFinalizer(unit, PodsGoneFinalizer)
	if err := client.IgnoreNotFound(r.client.Patch(ctx, unit, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))); err != nil {
		return fmt.Errorf("remove finalizer: %w", err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Released deleted queue unit: its job's pods are gone", "queueUnit", klog.KObj(unit))
	return nil
}
