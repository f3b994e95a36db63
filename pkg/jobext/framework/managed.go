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
	corev1 "k8s.io/api/core/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// The one rule of which jobs koord-queue manages, shared by the reconciler
// (takeOver) and the admission webhook:
//
//   - a job that asked for the queue (AskedForQueue: a quota label, or a
//     kind's opt-in such as a Workflow's koord-queue-suspend template) is
//     managed whatever its state, until it finished: the webhook suspends it
//     at creation and the reconciler holds it while its unit is not admitted,
//     even if it started before its unit existed;
//   - with --manage-all-jobs, any other job of an enabled kind in a namespace
//     the selector matches is managed too, but only if it has not started or
//     is suspended: a job it sweeps in is never stopped once running.
//
// A kind's NeverManaged jobs (a RayCluster of a RayJob) are never managed.

// AskedForQueue reports a job that asked to be queued: it carries the quota
// label or its kind's opt-in, and is not one its kind never manages.
func AskedForQueue(gj GenericJob) bool {
	if neverManaged(gj) {
		return false
	}
	if gj.Object().GetLabels()[schedv1alpha1.QuotaNameLabel] != "" {
		return true
	}
	optIn, ok := gj.(QueueOptIn)
	return ok && optIn.OptsIn()
}

// ManagedAtCreation reports whether a job that is being created will be
// managed: it asked for the queue, or --manage-all-jobs is on and ns is
// selected. ns may be nil when manageAll is off.
func ManagedAtCreation(gj GenericJob, manageAll bool, sel NamespaceSelector, ns *corev1.Namespace) bool {
	if AskedForQueue(gj) {
		return true
	}
	return manageAll && !neverManaged(gj) && ns != nil && sel.Matches(ns)
}

func neverManaged(gj GenericJob) bool {
	nm, ok := gj.(NeverManaged)
	return ok && nm.NeverManaged()
}
