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

package quotaqueues

import (
	"context"
	"fmt"
	"sync"

	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
)

// Controller keeps the Queues of the ElasticQuotas. Its work items are
// quota names, which are Queue names too.
type Controller struct {
	client   client.Client
	recorder record.EventRecorder
	queue    workqueue.TypedRateLimitingInterface[string]

	mu sync.Mutex
	// quotas are the ElasticQuotas seen; of one name, one counts.
	quotas *quota.SameNames

	registrations []toolscache.ResourceEventHandlerRegistration
}

var (
	_ manager.Runnable               = (*Controller)(nil)
	_ manager.LeaderElectionRunnable = (*Controller)(nil)
)

// New returns a controller that reads and writes through c and records
// events with recorder, without watching anything yet (see Watch).
func New(c client.Client, recorder record.EventRecorder) *Controller {
	return &Controller{client: c, recorder: recorder, quotas: quota.NewSameNames(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "elasticquota-queues"})}
}

// Watch registers the controller's handlers of ElasticQuotas and Queues on
// informers.
func (c *Controller) Watch(ctx context.Context, informers cache.Cache) error {
	eqInformer, err := informers.GetInformer(ctx, &eqv1alpha1.ElasticQuota{})
	if err != nil {
		return fmt.Errorf("watch ElasticQuotas (is the ElasticQuota CRD of scheduling.sigs.k8s.io installed?): %w", err)
	}
	reg, err := eqInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.onQuota(obj) },
		UpdateFunc: func(_, obj any) { c.onQuota(obj) },
		DeleteFunc: c.onQuotaDelete,
	})
	if err != nil {
		return err
	}
	c.registrations = append(c.registrations, reg)
	queueInformer, err := informers.GetInformer(ctx, &schedv1alpha1.Queue{})
	if err != nil {
		return fmt.Errorf("watch Queues: %w", err)
	}
	reg, err = queueInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.onQueue(obj) },
		UpdateFunc: func(_, obj any) { c.onQueue(obj) },
		DeleteFunc: c.onQueue,
	})
	if err != nil {
		return err
	}
	c.registrations = append(c.registrations, reg)
	return nil
}

// NeedLeaderElection is true: only the leader writes Queues.
func (*Controller) NeedLeaderElection() bool { return true }

// HasSynced is true once every ElasticQuota and Queue has been seen: before,
// a Queue whose quota was not seen yet would look stray.
func (c *Controller) HasSynced() bool {
	for _, r := range c.registrations {
		if !r.HasSynced() {
			return false
		}
	}
	return true
}

// Start runs the worker until ctx ends, once the informers have synced.
// It returns only after the sync in flight, so the lease is released after
// the last write.
func (c *Controller) Start(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		c.queue.ShutDown()
	}()
	if !toolscache.WaitForCacheSync(ctx.Done(), c.HasSynced) {
		return nil // stopped before the caches synced
	}
	for c.processNext(ctx) {
	}
	return nil
}

func (c *Controller) processNext(ctx context.Context) bool {
	name, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(name)
	if err := c.Reconcile(ctx, name); err != nil {
		klog.FromContext(ctx).Error(err, "Failed to sync the Queue of an ElasticQuota", "quota", name)
		c.queue.AddRateLimited(name)
		return true
	}
	c.queue.Forget(name)
	return true
}

func (c *Controller) onQuota(obj any) {
	eq, ok := obj.(*eqv1alpha1.ElasticQuota)
	if !ok {
		return
	}
	c.mu.Lock()
	c.quotas.Add(eq)
	c.mu.Unlock()
	c.queue.Add(eq.Name)
}

func (c *Controller) onQuotaDelete(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	eq, ok := obj.(*eqv1alpha1.ElasticQuota)
	if !ok {
		return
	}
	c.mu.Lock()
	c.quotas.Remove(eq)
	c.mu.Unlock()
	c.queue.Add(eq.Name)
}

func (c *Controller) onQueue(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	q, ok := obj.(*schedv1alpha1.Queue)
	if !ok || q.Namespace != schedv1alpha1.QueueNamespace {
		return
	}
	c.queue.Add(q.Name)
}

// counting is the ElasticQuota of name that counts; nil when there is none.
func (c *Controller) counting(name string) *eqv1alpha1.ElasticQuota {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.quotas.Counting(name)
}
