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
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
)

// creationOrder lists, per quota, the jobs of one extension that were seen
// created and may still lack a unit, with their place in time
// (queueunit.JobCreated). Before a job's unit is created, the units of the
// jobs listed before it are made, so the scheduler, which admits what it
// sees first, sees units in the order their jobs were created, however many
// workers reconcile and in whatever order they finish. The job informer
// delivers creations in the order the API server stored them, and a job is
// listed before its reconcile is queued, so a job's predecessors are always
// listed when it is reconciled.
type creationOrder struct {
	mu      sync.Mutex
	byQuota map[string]map[types.NamespacedName]time.Time
	quotaOf map[types.NamespacedName]string
}

func newCreationOrder() *creationOrder {
	return &creationOrder{byQuota: map[string]map[types.NamespacedName]time.Time{}, quotaOf: map[types.NamespacedName]string{}}
}

// add lists a job of quota created at at.
func (o *creationOrder) add(quota string, key types.NamespacedName, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if old, ok := o.quotaOf[key]; ok && old != quota {
		o.removeLocked(key)
	}
	if o.byQuota[quota] == nil {
		o.byQuota[quota] = map[types.NamespacedName]time.Time{}
	}
	o.byQuota[quota][key] = at
	o.quotaOf[key] = quota
}

// done takes a job off the list: it has its unit, or never will.
func (o *creationOrder) done(key types.NamespacedName) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.removeLocked(key)
}

func (o *creationOrder) removeLocked(key types.NamespacedName) {
	quota, ok := o.quotaOf[key]
	if !ok {
		return
	}
	delete(o.quotaOf, key)
	delete(o.byQuota[quota], key)
	if len(o.byQuota[quota]) == 0 {
		delete(o.byQuota, quota)
	}
}

// before returns the jobs listed under key's quota that come before it,
// earliest first (then by namespace and name, as the queues order ties).
func (o *creationOrder) before(key types.NamespacedName) []types.NamespacedName {
	o.mu.Lock()
	defer o.mu.Unlock()
	quota, ok := o.quotaOf[key]
	if !ok {
		return nil
	}
	jobs := o.byQuota[quota]
	at := jobs[key]
	var out []types.NamespacedName
	for k, t := range jobs {
		if placedBefore(t, k, at, key) {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return placedBefore(jobs[out[i]], out[i], jobs[out[j]], out[j]) })
	return out
}

func placedBefore(at time.Time, key types.NamespacedName, otherAt time.Time, other types.NamespacedName) bool {
	if !at.Equal(otherAt) {
		return at.Before(otherAt)
	}
	if key.Namespace != other.Namespace {
		return key.Namespace < other.Namespace
	}
	return key.Name < other.Name
}

// jobEvents queues a reconcile for every event of a job, as the builder's
// For does, and lists each job it sees created first, so that the list is
// complete before any reconcile reads it.
func (r *Reconciler) jobEvents() handler.Funcs {
	enqueue := func(obj client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if quota := r.quotaOfJob(e.Object); quota != "" {
				r.order.add(quota, client.ObjectKeyFromObject(e.Object), queueunit.JobCreated(e.Object.GetCreationTimestamp(), e.Object.GetAnnotations()))
			}
			enqueue(e.Object, q)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(e.ObjectNew, q)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.order.done(client.ObjectKeyFromObject(e.Object))
			enqueue(e.Object, q)
		},
		GenericFunc: func(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(e.Object, q)
		},
	}
}

// quotaOfJob is the quota a job's unit will be charged to: its label, else
// --default-quota; "" for a job whose unit has no quota (never admitted, so
// its order does not matter).
func (r *Reconciler) quotaOfJob(obj client.Object) string {
	if q := obj.GetLabels()[schedv1alpha1.QuotaNameLabel]; q != "" {
		return q
	}
	return r.opts.DefaultQuota
}

// unitsBefore makes the units of the jobs listed before key, earliest first.
// A job whose unit cannot be made now is passed over (its own reconcile
// tries again), so that one broken job never holds back the rest.
func (r *Reconciler) unitsBefore(ctx context.Context, key types.NamespacedName) {
	for _, k := range r.order.before(key) {
		if _, err := r.reconcile(ctx, k, true); err != nil {
			ctrl.LoggerFrom(ctx).V(2).Info("Could not make the unit of an earlier job first", "earlierJob", k, "err", err.Error())
		}
	}
}
