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

package jobext

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/job"
)

// The user guide's uninstall steps, in their order. Deleting QueueUnits while
// koord-queue-controllers runs does not work: the extension makes the unit
// of a job that still exists again at once. With the controllers stopped
// first, the units removed (finalizer, then delete) stay gone, and the jobs
// stay suspended until resumed by hand.
func TestUninstallOrder(t *testing.T) {
	c := k8s(t)
	ctx := context.Background()
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "uninstall-"}}
	if err := c.Create(ctx, nsObj); err != nil {
		t.Fatal(err)
	}
	ns := nsObj.Name
	stop := runManager(t, env.Config, ns, []string{job.Name}, nil)
	t.Cleanup(stop)
	names := []string{"waiting-a", "waiting-b"}
	for _, name := range names {
		if err := c.Create(ctx, batchJob(ns, name, true, map[string]string{schedv1alpha1.QuotaNameLabel: quota})); err != nil {
			t.Fatal(err)
		}
	}
	first := map[string]types.UID{}
	for _, name := range names {
		u := waitUnit(t, c, ns, name, "unit with its finalizer", func(u *schedv1alpha1.QueueUnit) bool {
			return len(u.Finalizers) > 0
		})
		first[name] = u.UID
	}

	// Deleting a unit while the controllers run: it comes back.
	removeUnit(t, c, ns, "waiting-a")
	again := waitUnit(t, c, ns, "waiting-a", "unit made again", func(u *schedv1alpha1.QueueUnit) bool {
		return u.UID != first["waiting-a"] && u.DeletionTimestamp == nil
	})
	first["waiting-a"] = again.UID

	// 1. Stop koord-queue-controllers. 2. Remove the finalizers, delete the units.
	stop()
	for _, name := range names {
		removeUnit(t, c, ns, name)
	}
	for _, name := range names {
		waitUnitGone(t, c, ns, name)
	}
	quiet(t)
	list := &schedv1alpha1.QueueUnitList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d units came back after the controllers were stopped", len(list.Items))
	}
	// The jobs stay held until resumed by their own field.
	for _, name := range names {
		if j := getJob(t, c, ns, name); !ptr.Deref(j.Spec.Suspend, false) {
			t.Errorf("job %s is no longer suspended", name)
		}
	}
}

// removeUnit does what the guide says: remove the unit's finalizers, then
// delete it.
func removeUnit(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	u := &schedv1alpha1.QueueUnit{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := c.Patch(context.Background(), u, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))); err != nil {
		t.Fatalf("remove finalizers of %s: %v", name, err)
	}
	if err := c.Delete(context.Background(), u); client.IgnoreNotFound(err) != nil {
		t.Fatalf("delete unit %s: %v", name, err)
	}
}
