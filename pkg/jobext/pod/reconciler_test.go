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

package pod

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

// A pod created without the gate is told once that it runs outside the
// queue, and the memory of having told it goes with the pod: a new pod of
// the same name is told again, and nothing is kept for pods that are gone.
func TestLeftAlonePodsAreForgottenWithTheirPods(t *testing.T) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := schedv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithIndex(&corev1.Pod{}, memberIndex, memberOf).Build()
	recorder := events.NewFakeRecorder(10)
	r := NewReconciler(c, &framework.Extension{Name: Name}, recorder, clocktesting.NewFakeClock(time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)), framework.ReconcilerOptions{})
	ctx := context.Background()

	p := newPod("a", "1", nil, nil)
	p.UID = "uid-1"
	if err := c.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: UnitNameOf(p)}}
	reconcileTwice := func() {
		t.Helper()
		for range 2 {
			if _, err := r.Reconcile(ctx, req); err != nil {
				t.Fatal(err)
			}
		}
	}
	leftAloneEvents := func() int {
		n := 0
		for {
			select {
			case e := <-recorder.Events:
				if strings.Contains(e, framework.EventLeftAlone) {
					n++
				}
			default:
				return n
			}
		}
	}

	reconcileTwice()
	if n := leftAloneEvents(); n != 1 {
		t.Errorf("an ungated pod reconciled twice got %d LeftAlone events, want 1", n)
	}
	if n := r.toldCount(); n != 1 {
		t.Errorf("%d pods remembered as told, want 1", n)
	}
	units := &schedv1alpha1.QueueUnitList{}
	if err := c.List(ctx, units); err != nil || len(units.Items) != 0 {
		t.Errorf("an ungated pod got units %v (err %v), want none", units.Items, err)
	}

	if err := c.Delete(ctx, p); err != nil {
		t.Fatal(err)
	}
	reconcileTwice()
	if n := r.toldCount(); n != 0 {
		t.Errorf("%d pods remembered as told after the pod was deleted, want 0", n)
	}

	again := newPod("a", "1", nil, nil)
	again.UID = "uid-2"
	if err := c.Create(ctx, client.Object(again)); err != nil {
		t.Fatal(err)
	}
	reconcileTwice()
	if n := leftAloneEvents(); n != 1 {
		t.Errorf("a new ungated pod of the same name got %d LeftAlone events, want 1", n)
	}
}
