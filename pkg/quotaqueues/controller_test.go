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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllertest"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// TestControllerRunsOnItsInformers runs the controller alone on fake
// informers and a fake client: it writes nothing before both informers have
// synced (a Queue whose quota was not seen yet would look stray), then makes
// the Queue of a quota added through the informer, and deletes it with the
// quota.
func TestControllerRunsOnItsInformers(t *testing.T) {
	s := scheme.New()
	gvk := func(obj client.Object) schema.GroupVersionKind {
		t.Helper()
		k, err := apiutil.GVKForObject(obj, s)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	quotas, queues := controllertest.NewFakeInformer(), controllertest.NewFakeInformer()
	informers := &informertest.FakeInformers{Scheme: s, InformersByGVK: map[schema.GroupVersionKind]toolscache.SharedIndexInformer{
		gvk(&eqv1alpha1.ElasticQuota{}): quotas, gvk(&schedv1alpha1.Queue{}): queues,
	}}
	w := newWorld(t)
	ctx, cancel := context.WithCancel(context.Background())
	if err := w.c.Watch(ctx, informers); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.c.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	}()
	eq := utiltesting.MakeElasticQuota("team-a").Max(corev1.ResourceCPU, "2").Obj()
	quotas.Add(eq)
	quotas.Synced()
	if w.c.HasSynced() {
		t.Fatal("synced before the Queue informer")
	}
	// Not synced: the name waits in the work queue, nothing is written.
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 200*time.Millisecond, true, func(context.Context) (bool, error) {
		return w.queue(t, "team-a") != nil, nil
	}); err == nil {
		t.Fatal("a Queue was made before the Queue informer synced")
	}
	queues.Synced()
	poll := func(what string, want bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			return (w.queue(t, "team-a") != nil) == want, nil
		}); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	poll("no Queue made for the quota once synced", true)
	quotas.Delete(eq)
	poll("the Queue of the deleted quota stays", false)
}
