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

package chaos_test

import (
	"context"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// approver is the external controller of the AdmissionCheck checkName: it
// watches QueueUnits and answers Ready to every Pending check of that name,
// as a provisioner would once capacity is there. Approved counts its answers.
type approver struct {
	client   client.Client
	queue    workqueue.TypedRateLimitingInterface[types.NamespacedName]
	approved atomic.Int64
}

// run watches units through cache and answers until ctx ends.
func (a *approver) run(ctx context.Context, cache ctrlcache.Cache) error {
	a.queue = workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName]())
	inf, err := cache.GetInformer(ctx, &schedv1alpha1.QueueUnit{})
	if err != nil {
		return err
	}
	enqueue := func(obj any) {
		if u, ok := obj.(*schedv1alpha1.QueueUnit); ok && pendingCheck(u) {
			a.queue.Add(types.NamespacedName{Namespace: u.Namespace, Name: u.Name})
		}
	}
	if _, err := inf.AddEventHandler(handler{enqueue}); err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		a.queue.ShutDown()
	}()
	go func() {
		for {
			key, shutdown := a.queue.Get()
			if shutdown {
				return
			}
			if err := a.answer(ctx, key); err != nil && ctx.Err() == nil {
				a.queue.AddRateLimited(key) // the API server may be restarting
			} else {
				a.queue.Forget(key)
			}
			a.queue.Done(key)
		}
	}()
	return nil
}

func pendingCheck(u *schedv1alpha1.QueueUnit) bool {
	for _, c := range u.Status.AdmissionChecks {
		if c.Name == checkName && c.State == schedv1alpha1.CheckStatePending {
			return true
		}
	}
	return false
}

// answer reads the unit afresh and writes Ready with optimistic locking.
func (a *approver) answer(ctx context.Context, key types.NamespacedName) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	u := &schedv1alpha1.QueueUnit{}
	if err := a.client.Get(ctx, key, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	if !pendingCheck(u) {
		return nil
	}
	now := metav1.Now()
	for i := range u.Status.AdmissionChecks {
		c := &u.Status.AdmissionChecks[i]
		if c.Name == checkName && c.State == schedv1alpha1.CheckStatePending {
			c.State, c.LastTransitionTime, c.Message = schedv1alpha1.CheckStateReady, now, "approved by the chaos test"
		}
	}
	if err := a.client.Status().Update(ctx, u); err != nil {
		return err
	}
	a.approved.Add(1)
	return nil
}

type handler struct{ enqueue func(any) }

func (h handler) OnAdd(obj any, _ bool) { h.enqueue(obj) }
func (h handler) OnUpdate(_, obj any)   { h.enqueue(obj) }
func (h handler) OnDelete(any)          {}
