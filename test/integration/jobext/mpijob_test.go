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

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

func mpiJob(ns, name string, suspend bool) *mpiv2.MPIJob {
	return &mpiv2.MPIJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: quotaLabels()},
		Spec: mpiv2.MPIJobSpec{
			SlotsPerWorker: ptr.To[int32](1),
			RunPolicy:      mpiv2.RunPolicy{Suspend: ptr.To(suspend), CleanPodPolicy: ptr.To(mpiv2.CleanPodPolicyRunning)},
			MPIReplicaSpecs: map[mpiv2.MPIReplicaType]*mpiv2.ReplicaSpec{
				mpiv2.MPIReplicaTypeLauncher: {Replicas: ptr.To[int32](1), RestartPolicy: mpiv2.RestartPolicyNever, Template: template("1")},
				mpiv2.MPIReplicaTypeWorker:   {Replicas: ptr.To[int32](2), RestartPolicy: mpiv2.RestartPolicyNever, Template: template("2")},
			},
		},
	}
}

func mpiSuspended(o client.Object) bool {
	return ptr.Deref(o.(*mpiv2.MPIJob).Spec.RunPolicy.Suspend, false)
}

// mpiCase plays the mpi-operator's status: a start time and active launcher
// and workers while running, none once suspended.
func mpiCase() kindCase {
	return kindCase{
		ext: "mpijob", kind: "MPIJob",
		newJob:   func(ns string) client.Object { return mpiJob(ns, "mpi", true) },
		empty:    func() client.Object { return &mpiv2.MPIJob{} },
		suspend:  mpiSuspended,
		podSets:  []string{"launcher", "worker"},
		resource: cpu("5"),
		setPods: func(o client.Object, running bool) {
			st := &o.(*mpiv2.MPIJob).Status
			if st.Conditions == nil {
				st.Conditions = []mpiv2.JobCondition{}
			}
			if running {
				now := metav1.Now()
				st.StartTime = &now
				st.ReplicaStatuses = map[mpiv2.MPIReplicaType]*mpiv2.ReplicaStatus{
					mpiv2.MPIReplicaTypeLauncher: {Active: 1}, mpiv2.MPIReplicaTypeWorker: {Active: 2},
				}
				return
			}
			st.StartTime = nil
			st.ReplicaStatuses = map[mpiv2.MPIReplicaType]*mpiv2.ReplicaStatus{
				mpiv2.MPIReplicaTypeLauncher: {}, mpiv2.MPIReplicaTypeWorker: {},
			}
		},
	}
}

// TestMPIJobLifecycle: held, admitted and resumed, running, evicted and
// suspended, requeued, deleted with its unit.
func TestMPIJobLifecycle(t *testing.T) { runKindCase(t, mpiCase()) }

// TestMPIJobBackstop: an MPIJob with the quota label created while no
// webhook ran, and already started, is suspended by the reconciler and waits
// for its unit.
func TestMPIJobBackstop(t *testing.T) {
	c := k8s(t)
	ctx := context.Background()
	ns := createNamespace(t, c, nil)
	j := mpiJob(ns, "early", false)
	if err := c.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	mpiCase().setPods(j, true)
	if err := c.Status().Update(ctx, j); err != nil {
		t.Fatal(err)
	}
	if mpiSuspended(j) {
		t.Fatal("MPIJob suspended before the controllers ran")
	}
	startManager(t, []string{"mpijob"}, func(o *appOptions) { o.WatchNamespaces = append(o.WatchNamespaces, ns) })
	waitSuspend(t, c, mpiCase(), ns, "early", true)
	u := waitUnit(t, c, ns, "early-mpijob", "queue unit of the started MPIJob", anyUnit)
	if p := u.Status.Phase; p == schedv1alpha1.QueueUnitPhaseDequeued || p == schedv1alpha1.QueueUnitPhaseRunning {
		t.Errorf("unit of the held MPIJob is %s", p)
	}
}

// TestMPIJobLauncherNotQueued: with --manage-all-jobs, the launcher Job the
// mpi-operator makes for an admitted MPIJob is not held as a Job of its own
// (its MPIJob's unit charges it): the webhook stores it as written and no
// unit appears for it.
func TestMPIJobLauncherNotQueued(t *testing.T) {
	w := startWebhook(t, []string{"job", "mpijob"}, func(o *appOptions) { o.ManageAllJobs = true })
	ctx := context.Background()
	owner := mpiJob(w.ns, "owner", true)
	if err := w.c.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	launcher := batchJob(w.ns, "owner-launcher", false, nil)
	launcher.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, mpiv2.SchemeGroupVersionKind)}
	plain := batchJob(w.ns, "plain", false, nil)
	for _, j := range []client.Object{launcher, plain} {
		if err := w.c.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	if ptr.Deref(launcher.Spec.Suspend, false) {
		t.Error("the MPIJob's launcher Job was stored suspended")
	}
	if !ptr.Deref(plain.Spec.Suspend, false) {
		t.Error("a plain Job was not suspended with --manage-all-jobs: the case proves nothing")
	}
	waitUnit(t, w.c, w.ns, "plain", "unit of the plain Job", anyUnit)
	quiet(t)
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: "owner-launcher"}, &schedv1alpha1.QueueUnit{}); client.IgnoreNotFound(err) != nil || err == nil {
		t.Errorf("unit of the MPIJob's launcher Job: err=%v", err)
	}
}
