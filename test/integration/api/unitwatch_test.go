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

package api

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/app"
	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/pkg/util/watchjson"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// The scheduler's cache of QueueUnits, whose watch events are decoded by
// watchjson, holds what the API server holds through creations, status
// writes and deletions, before and after it started.
func TestUnitCacheDecodesTheAPIServersWatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const ns = "unitwatch"
	ensureNamespace(t, ns)
	unit := func(name string) *schedv1alpha1.QueueUnit {
		return utiltesting.MakeQueueUnit(name, ns).Quota("q").Priority(3).PodSet("worker", 2, "cpu", "1", "memory", "1Gi").Obj()
	}
	admit := func(name string) {
		t.Helper()
		u := &schedv1alpha1.QueueUnit{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
			t.Fatal(err)
		}
		u.Status.Phase, u.Status.Quota, u.Status.Message = schedv1alpha1.QueueUnitPhaseDequeued, "q", "admitted by the test"
		u.Status.Admissions = []schedv1alpha1.Admission{{Name: "worker", Replicas: 2}}
		u.Status.Conditions = []metav1.Condition{{Type: "Admitted", Status: metav1.ConditionTrue, Reason: "Test", LastTransitionTime: metav1.Now()}}
		if err := env.Client.Status().Update(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		if err := env.Client.Create(ctx, unit(fmt.Sprintf("before-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	admit("before-1")

	var decoded atomic.Int64
	uw := app.NewUnitWatch()
	kind := uw.Kind
	kind.Decode = func(data []byte) (runtime.Object, error) {
		decoded.Add(1)
		return uw.Kind.Decode(data)
	}
	s := scheme.New()
	w, err := watchjson.NewWatcher(env.Config, nil, s, kind, "queueunits")
	if err != nil {
		t.Fatal(err)
	}
	c, err := cache.New(env.Config, cache.Options{Scheme: s, NewInformer: uw.NewInformer(w)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetInformer(ctx, &schedv1alpha1.QueueUnit{}); err != nil {
		t.Fatal(err)
	}
	go func() {
		if err := c.Start(ctx); err != nil {
			t.Error(err)
		}
	}()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("the cache did not sync")
	}
	atSync := decoded.Load()

	for i := range 2 {
		if err := env.Client.Create(ctx, unit(fmt.Sprintf("after-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	admit("after-0")
	admit("before-2")
	if err := env.Client.Delete(ctx, unit("before-0")); err != nil {
		t.Fatal(err)
	}

	var diff string
	err = framework.Eventually(ctx, 30*time.Second, func(ctx context.Context) (bool, error) {
		var want, got schedv1alpha1.QueueUnitList
		if err := env.Client.List(ctx, &want, client.InNamespace(ns)); err != nil {
			return false, err
		}
		if err := c.List(ctx, &got, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for i := range want.Items {
			// The cached units carry no managed fields, nor apiVersion and
			// kind, as client-go's typed informers leave them.
			want.Items[i].ManagedFields, want.Items[i].TypeMeta = nil, metav1.TypeMeta{}
		}
		for i := range got.Items {
			got.Items[i].TypeMeta = metav1.TypeMeta{}
		}
		// The cache lists in no order.
		byName := func(a, b schedv1alpha1.QueueUnit) int { return strings.Compare(a.Name, b.Name) }
		slices.SortFunc(want.Items, byName)
		slices.SortFunc(got.Items, byName)
		diff = cmp.Diff(want.Items, got.Items)
		return diff == "" && len(want.Items) == 4, nil
	})
	if err != nil {
		t.Fatalf("the cache does not hold what the API server holds (-API +cache):\n%s", diff)
	}
	// Two creations, two status writes and a deletion after the sync,
	// each an event whose unit was decoded here.
	if n := decoded.Load() - atSync; n < 5 {
		t.Errorf("%d units of watch events were decoded here after the sync, want at least 5", n)
	}
	t.Logf("units decoded here: %d before the sync (the initial events, when listed by a watch), %d after", atSync, decoded.Load()-atSync)
}
