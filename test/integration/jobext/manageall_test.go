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

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/job"
)

// createNamespace makes a namespace for a test, deleted when it ends.
func createNamespace(t *testing.T, c client.Client, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "jobext-", Labels: labels}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), ns) })
	return ns.Name
}

// assertNotTakenOver checks that a job kept its suspension and got no unit.
func assertNotTakenOver(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	if ptr.Deref(getJob(t, c, ns, name).Spec.Suspend, false) {
		t.Errorf("job %s/%s suspended", ns, name)
	}
	err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &schedv1alpha1.QueueUnit{})
	if client.IgnoreNotFound(err) != nil || err == nil {
		t.Errorf("job %s/%s has a queue unit (err %v)", ns, name, err)
	}
}

// TestManageAllJobsLeavesKubeSystem: by default --manage-all-jobs takes no job
// from kube-system.
func TestManageAllJobsLeavesKubeSystem(t *testing.T) {
	c, ns := startManager(t, []string{job.Name}, func(o *appOptions) {
		o.ManageAllJobs = true
		o.WatchNamespaces = append(o.WatchNamespaces, framework.KubeSystemNamespace)
	})
	ctx := context.Background()
	sys := batchJob(framework.KubeSystemNamespace, "kq-test-"+ns, false, nil)
	if err := c.Create(ctx, sys); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sys, client.PropagationPolicy(metav1.DeletePropagationBackground)) })
	// A job of the test's namespace is taken over: the manager is running.
	if err := c.Create(ctx, batchJob(ns, "taken", false, nil)); err != nil {
		t.Fatal(err)
	}
	waitUnit(t, c, ns, "taken", "queue unit", anyUnit)
	quiet(t)
	assertNotTakenOver(t, c, framework.KubeSystemNamespace, sys.Name)
}

// TestManageAllJobsNamespaceSelector: a custom selector takes jobs only from
// the namespaces it matches.
func TestManageAllJobsNamespaceSelector(t *testing.T) {
	c := k8s(t)
	selected := createNamespace(t, c, map[string]string{"koord-queue-test/queue": "on"})
	c, ns := startManager(t, []string{job.Name}, func(o *appOptions) {
		o.ManageAllJobs = true
		o.ManagedJobsNamespaceSelector = "koord-queue-test/queue=on"
		o.WatchNamespaces = append(o.WatchNamespaces, selected)
	})
	ctx := context.Background()
	if err := c.Create(ctx, batchJob(ns, "outside", false, nil)); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, batchJob(selected, "inside", false, nil)); err != nil {
		t.Fatal(err)
	}
	waitUnit(t, c, selected, "inside", "queue unit", anyUnit)
	waitJobSuspend(t, c, selected, "inside", true)
	quiet(t)
	assertNotTakenOver(t, c, ns, "outside")
}

// TestManageAllJobsLeavesStartedJob: a job that already runs when the
// controllers see it is neither suspended nor queued, and says why once.
func TestManageAllJobsLeavesStartedJob(t *testing.T) {
	c := k8s(t)
	ctx := context.Background()
	early := createNamespace(t, c, nil)
	if err := c.Create(ctx, batchJob(early, "running", false, nil)); err != nil {
		t.Fatal(err)
	}
	setJobStatus(t, c, early, "running", func(j *batchv1.Job) {
		now := metav1.Now()
		j.Status.StartTime = &now
		j.Status.Active = 2
		j.Status.Ready = ptr.To[int32](2)
	})
	c, ns := startManager(t, []string{job.Name}, func(o *appOptions) {
		o.ManageAllJobs = true
		o.WatchNamespaces = append(o.WatchNamespaces, early)
	})
	if err := c.Create(ctx, batchJob(ns, "taken", false, nil)); err != nil {
		t.Fatal(err)
	}
	waitUnit(t, c, ns, "taken", "queue unit", anyUnit)
	leftAlone := func(ctx context.Context) ([]corev1.Event, error) {
		list := &corev1.EventList{}
		if err := c.List(ctx, list, client.InNamespace(early)); err != nil {
			return nil, err
		}
		var out []corev1.Event
		for _, e := range list.Items {
			if e.InvolvedObject.Name == "running" && e.Reason == framework.EventLeftAlone {
				out = append(out, e)
			}
		}
		return out, nil
	}
	eventually(t, "event "+framework.EventLeftAlone, func(ctx context.Context) (bool, error) {
		evs, err := leftAlone(ctx)
		return len(evs) > 0, err
	})
	// The job's progress brings it back to the reconciler: no second event.
	setJobStatus(t, c, early, "running", func(j *batchv1.Job) { j.Status.Ready = ptr.To[int32](1) })
	quiet(t)
	assertNotTakenOver(t, c, early, "running")
	evs, err := leftAlone(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Count > 1 || (evs[0].Series != nil && evs[0].Series.Count > 1) {
		t.Errorf("want one %s event recorded once, got %+v", framework.EventLeftAlone, evs)
	}
}

// TestManageAllJobsDefaultQuota: with --default-quota, a job without a quota
// label is queued in that quota.
func TestManageAllJobsDefaultQuota(t *testing.T) {
	c, ns := startManager(t, []string{job.Name}, func(o *appOptions) {
		o.ManageAllJobs = true
		o.DefaultQuota = "team-default"
	})
	ctx := context.Background()
	if err := c.Create(ctx, batchJob(ns, "homeless", false, nil)); err != nil {
		t.Fatal(err)
	}
	waitJobSuspend(t, c, ns, "homeless", true)
	u := waitUnit(t, c, ns, "homeless", "queue unit", anyUnit)
	check := func(u *schedv1alpha1.QueueUnit, when string) {
		t.Helper()
		if u.Labels[schedv1alpha1.QuotaNameLabel] != "team-default" || u.Spec.Queue != "team-default" {
			t.Errorf("%s: unit quota label %q queue %q, want team-default", when, u.Labels[schedv1alpha1.QuotaNameLabel], u.Spec.Queue)
		}
		if _, ok := u.Annotations[framework.NoQuotaAnnotation]; ok {
			t.Errorf("%s: unit in the default quota says it has none: %v", when, u.Annotations)
		}
	}
	check(u, "created")
	enqueue(t, c, ns, "homeless")
	eventually(t, "unrelated job label", func(ctx context.Context) (bool, error) {
		cur := getJob(t, c, ns, "homeless")
		if cur.Labels == nil {
			cur.Labels = map[string]string{}
		}
		cur.Labels["unrelated"] = "x"
		return true, c.Update(ctx, cur)
	})
	check(waitUnit(t, c, ns, "homeless", "label copied", func(u *schedv1alpha1.QueueUnit) bool { return u.Labels["unrelated"] == "x" }), "after a resync")
	admit(t, c, ns, "homeless")
	waitJobSuspend(t, c, ns, "homeless", false)
}
