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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
)

// staleJob serves reads of the fake job from a copy taken earlier while
// stale is set, as a cache that has not seen the latest writes does.
type staleJob struct {
	copy  *corev1.ConfigMap
	stale bool
}

func withStaleJob(c client.WithWatch) (client.Client, *staleJob) {
	s := &staleJob{}
	wrapped := interceptor.NewClient(c, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if cm, ok := obj.(*corev1.ConfigMap); ok && s.stale && s.copy != nil && key == client.ObjectKeyFromObject(s.copy) {
				s.copy.DeepCopyInto(cm)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	return wrapped, s
}

// evictStored marks the stored unit of job "j" evicted, as the scheduler does.
func evictStored(t *testing.T, c client.Client, at time.Time) {
	t.Helper()
	u, err := storedUnit(c, "ns")
	if err != nil {
		t.Fatal(err)
	}
	if !queueunit.MarkEvicted(u, schedv1alpha1.ReasonPreempted, "test preempts", metav1.NewTime(at)) {
		t.Fatalf("unit %+v not evictable", u.Status)
	}
	if err := c.Status().Update(context.Background(), u); err != nil {
		t.Fatal(err)
	}
}

// chaos/j-00137: the reconciler resumes an admitted job; before its cache
// has seen that write, the unit is evicted. The cached job still reads as
// suspended with no pods, but the job's controller may be starting them:
// the admission is kept until the cache shows the job as the reconciler
// left it, and then the job is suspended and its unit handed back.
func TestEvictionWaitsForOwnResume(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sets := onePodSet()
	job := newFakeJob("j", map[string]string{schedv1alpha1.QuotaNameLabel: "q"}, nil, sets)
	base := fakeClient(job.cm, admittedUnit(job, t0)).(client.WithWatch)
	c, stale := withStaleJob(base)
	r, _ := newTestReconciler(c, fakeExtension(sets, JobStatus{}), ReconcilerOptions{})

	before := &corev1.ConfigMap{}
	if err := base.Get(context.Background(), client.ObjectKeyFromObject(job.cm), before); err != nil {
		t.Fatal(err)
	}
	reconcileJob(t, r, "ns")
	if storedSuspended(t, base, job) {
		t.Fatal("the admitted job was not resumed")
	}

	stale.copy, stale.stale = before, true
	evictStored(t, base, t0.Add(time.Second))
	reconcileJob(t, r, "ns")
	u, err := storedUnit(base, "ns")
	if err != nil {
		t.Fatal(err)
	}
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseDequeued || len(u.Status.Admissions) != 1 {
		t.Fatalf("decided on a job read from before its own resume: phase %s, admissions %d; want Dequeued with its admission",
			u.Status.Phase, len(u.Status.Admissions))
	}

	stale.stale = false
	reconcileJob(t, r, "ns")
	if !storedSuspended(t, base, job) {
		t.Error("the evicted job was not suspended once the cache caught up")
	}
	if u, _ := storedUnit(base, "ns"); u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued || len(u.Status.Admissions) != 0 {
		t.Errorf("after the suspension: phase %s, admissions %d; want Enqueued with none", u.Status.Phase, len(u.Status.Admissions))
	}
}

// An evicted job whose status counts no pod, while a pod of its unit still
// runs (made by the job's controller, not counted yet): the admission is
// kept until the pod is gone.
func TestEvictionWaitsForUnitPods(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sets := onePodSet()
	job := newFakeJob("j", map[string]string{schedv1alpha1.QuotaNameLabel: "q"}, nil, sets)
	job.cm.Data["suspend"] = "false"
	c := fakeClient(job.cm, admittedUnit(job, t0), unitPod("p", corev1.PodRunning), unitPod("done", corev1.PodSucceeded))
	r, _ := newTestReconciler(c, fakeExtension(sets, JobStatus{}), ReconcilerOptions{})
	evictStored(t, c, t0.Add(time.Second))

	reconcileJob(t, r, "ns")
	if !storedSuspended(t, c, job) {
		t.Fatal("the evicted job was not suspended")
	}
	if u, _ := storedUnit(c, "ns"); u.Status.Phase != schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatalf("handed back while a pod of the unit runs: phase %s", u.Status.Phase)
	}
	if err := c.Delete(context.Background(), unitPod("p", corev1.PodRunning)); err != nil {
		t.Fatal(err)
	}
	reconcileJob(t, r, "ns")
	if u, _ := storedUnit(c, "ns"); u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued {
		t.Errorf("the pod gone (one succeeded left): phase %s, want Enqueued", u.Status.Phase)
	}
}

func TestOwnWritesForgetWhenCaughtUp(t *testing.T) {
	var w ownWrites
	obj := func(uid, rv string) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j", UID: types.UID(uid), ResourceVersion: rv}}
	}
	w.record(obj("a", "100"))
	for _, tc := range []struct {
		uid, rv string
		want    bool
	}{
		{"a", "99", true},   // the cache is behind
		{"a", "9", true},    // shorter is older
		{"a", "100", false}, // caught up: forgotten
		{"a", "99", false},  // nothing remembered any more
	} {
		if got := w.behind(obj(tc.uid, tc.rv)); got != tc.want {
			t.Errorf("behind(%s@%s) = %t, want %t", tc.uid, tc.rv, got, tc.want)
		}
	}
	w.record(obj("a", "100"))
	if w.behind(obj("b", "5")) {
		t.Error("another job of the same name read as behind the first one's write")
	}
	w.record(obj("a", "100"))
	if w.behind(obj("a", "not-a-number")) {
		t.Error("a version that cannot be compared read as behind")
	}
	w.record(obj("a", "100"))
	w.forget(types.NamespacedName{Namespace: "ns", Name: "j"})
	if w.behind(obj("a", "1")) {
		t.Error("a forgotten job read as behind")
	}
}
