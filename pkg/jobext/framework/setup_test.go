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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// The set-up the reconciler tests share: the extension of fakeJob, a fake API
// holding the job, and reads of what a reconcile left behind. Every job is
// named "j", so its unit is "j-fake".

// fakeExtension is the extension of fakeJob: every job it wraps has the pod
// sets sets and reports status.
func fakeExtension(sets []PodSet, status JobStatus) *Extension {
	return &Extension{
		Name:      "fake",
		GVK:       corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		NewObject: func() client.Object { return &corev1.ConfigMap{} },
		Wrap: func(o client.Object) (GenericJob, error) {
			return &fakeJob{cm: o.(*corev1.ConfigMap), sets: sets, status: status}, nil
		},
	}
}

// fakeClient is a fake API holding objs, whose QueueUnits have a status
// subresource as they do on a real API server, with the pod indexes of the
// fake extension (Reconciler.indexPods).
func fakeClient(objs ...client.Object) client.Client {
	b := fake.NewClientBuilder().WithScheme(testScheme()).WithStatusSubresource(&schedv1alpha1.QueueUnit{}, &corev1.Pod{}).
		WithObjects(objs...)
	r := &Reconciler{ext: fakeExtension(nil, JobStatus{})}
	if err := r.indexPods(context.Background(), builderIndexer{b}); err != nil {
		panic(err)
	}
	return b.Build()
}

// builderIndexer adds indexes to a fake client being built.
type builderIndexer struct{ b *fake.ClientBuilder }

func (i builderIndexer) IndexField(_ context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	i.b.WithIndex(obj, field, extract)
	return nil
}

// namespaceObject is a namespace with no labels.
func namespaceObject(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// jobRequest is the reconcile request of job "j" in ns.
func jobRequest(ns string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "j"}}
}

// reconcileJob reconciles job "j" in ns once and fails the test on an error.
func reconcileJob(t *testing.T, r *Reconciler, ns string) reconcile.Result {
	t.Helper()
	res, err := r.Reconcile(context.Background(), jobRequest(ns))
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	return res
}

// storedSuspended reads from c whether the fake job is suspended now.
func storedSuspended(t *testing.T, c client.Client, job *fakeJob) bool {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(job.cm), cm); err != nil {
		t.Fatal(err)
	}
	return cm.Data["suspend"] == "true"
}

// storedUnit reads the unit of job "j" in ns from c; the error says whether
// it exists.
func storedUnit(c client.Client, ns string) (*schedv1alpha1.QueueUnit, error) {
	u := &schedv1alpha1.QueueUnit{}
	err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "j-fake"}, u)
	return u, err
}

// onePodSet is the pod sets of a job of one pod.
func onePodSet() []PodSet { return []PodSet{{Name: "main", Count: 1}} }

// onePodRunning is the status of that job while its pod runs.
func onePodRunning() JobStatus {
	return JobStatus{PodSets: []PodSetStatus{{Name: "main", Running: 1}}}
}

// newTestReconciler reconciles ext's jobs in c, on a fake clock that stands
// still, recording events in the recorder it returns.
func newTestReconciler(c client.Client, ext *Extension, opts ReconcilerOptions) (*Reconciler, *events.FakeRecorder) {
	rec := events.NewFakeRecorder(10)
	return NewReconciler(c, ext, rec, clocktesting.NewFakeClock(time.Now()), opts), rec
}
