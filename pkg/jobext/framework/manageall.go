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
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// takesOverAll decides whether --manage-all-jobs takes a job over: its
// namespace must match the selector, and a job that already started and is
// not suspended is left to run (it gets one event saying so).
func (r *Reconciler) takesOverAll(ctx context.Context, gj GenericJob) (bool, error) {
	obj := gj.Object()
	ns := &corev1.Namespace{}
	if err := r.client.Get(ctx, client.ObjectKey{Name: obj.GetNamespace()}, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("get namespace: %w", err)
	}
	if !r.opts.ManagedNamespaces.Matches(ns) {
		ctrl.LoggerFrom(ctx).V(4).Info("Namespace not selected for --manage-all-jobs")
		return false, nil
	}
	if gj.IsSuspended() || !started(gj) {
		return true, nil
	}
	key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if r.leftAlone.first(key, obj.GetUID()) {
		r.recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventLeftAlone, "Queue",
			"not queued: the job had already started when koord-queue-controllers saw it (--manage-all-jobs never suspends a started job)")
	}
	return false, nil
}

// started reports a job that ran: it says so, or it has active pods.
func started(gj GenericJob) bool {
	if sr, ok := gj.(StartReporter); ok && sr.Started() {
		return true
	}
	return gj.Status().Active() > 0
}

// defaultQuota labels the unit of a job without a quota label with
// --default-quota, when set, and points its queue there.
func (r *Reconciler) defaultQuota(job interface{ GetLabels() map[string]string }, unit *schedv1alpha1.QueueUnit) {
	if r.opts.DefaultQuota == "" || job.GetLabels()[schedv1alpha1.QuotaNameLabel] != "" || unit.Labels[schedv1alpha1.QuotaNameLabel] != "" {
		return
	}
	if unit.Labels == nil {
		unit.Labels = map[string]string{}
	}
	unit.Labels[schedv1alpha1.QuotaNameLabel] = r.opts.DefaultQuota
	unit.Spec.Queue = r.opts.DefaultQuota
	delete(unit.Annotations, NoQuotaAnnotation)
}

// startedJobs remembers, per job, the started jobs --manage-all-jobs left
// alone and already told so, so each gets its event once per process. It is
// the reconciler's only state between reconciles; a deleted job is forgotten.
type startedJobs struct {
	mu   sync.Mutex
	seen map[types.NamespacedName]types.UID
}

// first reports whether key with uid is seen for the first time, and
// remembers it.
func (s *startedJobs) first(key types.NamespacedName, uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[types.NamespacedName]types.UID{}
	}
	if s.seen[key] == uid {
		return false
	}
	s.seen[key] = uid
	return true
}

func (s *startedJobs) forget(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.seen, key)
}
