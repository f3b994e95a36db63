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
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	jobframework "github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

func replicatedJob(name string, replicas, parallelism int32, cpu string) jobsetv1.ReplicatedJob {
	return jobsetv1.ReplicatedJob{Name: name, Replicas: replicas, Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
		Parallelism: ptr.To(parallelism), Completions: ptr.To(parallelism), Template: template(cpu),
	}}}
}

// jobSet has a driver (one Job of one pod of 1 cpu) and workers (two Jobs of
// two pods of 2 cpu each): 9 cpu.
func jobSet(ns, name string, suspend bool) *jobsetv1.JobSet {
	return &jobsetv1.JobSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: quotaLabels()},
		Spec: jobsetv1.JobSetSpec{
			Suspend: ptr.To(suspend),
			ReplicatedJobs: []jobsetv1.ReplicatedJob{
				replicatedJob("driver", 1, 1, "1"),
				replicatedJob("workers", 2, 2, "2"),
			},
		},
	}
}

func jobSetSuspended(o client.Object) bool {
	return ptr.Deref(o.(*jobsetv1.JobSet).Spec.Suspend, false)
}

// jobSetCase plays the jobset controller's status: every Job ready and
// active while running, none once suspended.
func jobSetCase() kindCase {
	return kindCase{
		ext: "jobset", kind: "JobSet",
		newJob:   func(ns string) client.Object { return jobSet(ns, "js", true) },
		empty:    func() client.Object { return &jobsetv1.JobSet{} },
		suspend:  jobSetSuspended,
		podSets:  []string{"driver", "workers"},
		resource: cpu("9"),
		setPods: func(o client.Object, running bool) {
			st := &o.(*jobsetv1.JobSet).Status
			if running {
				st.ReplicatedJobsStatus = []jobsetv1.ReplicatedJobStatus{
					{Name: "driver", Ready: 1, Active: 1}, {Name: "workers", Ready: 2, Active: 2},
				}
				return
			}
			st.ReplicatedJobsStatus = []jobsetv1.ReplicatedJobStatus{
				{Name: "driver", Suspended: 1}, {Name: "workers", Suspended: 2},
			}
		},
	}
}

// TestJobSetLifecycle: held, admitted and resumed, running, evicted and
// suspended, requeued, deleted with its unit.
func TestJobSetLifecycle(t *testing.T) { runKindCase(t, jobSetCase()) }

// TestJobSetBackstop: a JobSet with the quota label created while no webhook
// ran, and already running, is suspended by the reconciler and waits for its
// unit.
func TestJobSetBackstop(t *testing.T) {
	c := k8s(t)
	ctx := context.Background()
	ns := createNamespace(t, c, nil)
	js := jobSet(ns, "early", false)
	if err := c.Create(ctx, js); err != nil {
		t.Fatal(err)
	}
	jobSetCase().setPods(js, true)
	if err := c.Status().Update(ctx, js); err != nil {
		t.Fatal(err)
	}
	startManager(t, []string{"jobset"}, func(o *appOptions) { o.WatchNamespaces = append(o.WatchNamespaces, ns) })
	waitSuspend(t, c, jobSetCase(), ns, "early", true)
	u := waitUnit(t, c, ns, "early-jobset", "queue unit of the running JobSet", anyUnit)
	if p := u.Status.Phase; p == schedv1alpha1.QueueUnitPhaseDequeued || p == schedv1alpha1.QueueUnitPhaseRunning {
		t.Errorf("unit of the held JobSet is %s", p)
	}
}

// wideJobSet has n replicated jobs of one pod each.
func wideJobSet(ns, name string, n int) *jobsetv1.JobSet {
	js := jobSet(ns, name, false)
	js.Spec.ReplicatedJobs = nil
	for i := range n {
		js.Spec.ReplicatedJobs = append(js.Spec.ReplicatedJobs, replicatedJob(fmt.Sprintf("r%d", i), 1, 1, "100m"))
	}
	return js
}

// TestJobSetTooManyPodSets: a JobSet of more replicated jobs than a unit has
// pod sets is refused by the webhook, the message naming the limit. One
// created while the webhook was away gets a Warning naming the limit, no
// unit, and is left as written (running, not silently held).
func TestJobSetTooManyPodSets(t *testing.T) {
	w := startWebhook(t, []string{"job", "jobset"}, nil)
	ctx := context.Background()
	err := w.c.Create(ctx, wideJobSet(w.ns, "wide", schedv1alpha1.MaxPodSets+1))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than the %d a queue unit takes", schedv1alpha1.MaxPodSets)) {
		t.Fatalf("creating a JobSet of %d replicated jobs: err = %v, want a refusal naming the limit", schedv1alpha1.MaxPodSets+1, err)
	}
	atLimit := wideJobSet(w.ns, "at-limit", schedv1alpha1.MaxPodSets)
	if err := w.c.Create(ctx, atLimit); err != nil {
		t.Fatalf("a JobSet of %d replicated jobs refused: %v", schedv1alpha1.MaxPodSets, err)
	}
	if !jobSetSuspended(atLimit) {
		t.Error("a JobSet at the limit was not held")
	}

	c := k8s(t)
	ns := createNamespace(t, c, nil)
	early := wideJobSet(ns, "early-wide", schedv1alpha1.MaxPodSets+1)
	if err := c.Create(ctx, early); err != nil {
		t.Fatal(err)
	}
	startManager(t, []string{"jobset"}, func(o *appOptions) { o.WatchNamespaces = append(o.WatchNamespaces, ns) })
	msg := waitEventOn(t, c, ns, "JobSet", "early-wide", jobframework.EventInvalidJob)
	if !strings.Contains(msg, fmt.Sprintf("%d pod sets", schedv1alpha1.MaxPodSets+1)) || !strings.Contains(msg, fmt.Sprint(schedv1alpha1.MaxPodSets)) {
		t.Errorf("InvalidJob says %q, want the count and the limit", msg)
	}
	quiet(t)
	got := &jobsetv1.JobSet{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(early), got); err != nil {
		t.Fatal(err)
	}
	if jobSetSuspended(got) {
		t.Error("a JobSet that cannot be queued was suspended")
	}
	err = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "early-wide-jobset"}, &schedv1alpha1.QueueUnit{})
	if client.IgnoreNotFound(err) != nil || err == nil {
		t.Errorf("unit of a JobSet of %d pod sets: err=%v", schedv1alpha1.MaxPodSets+1, err)
	}
}

// TestJobSetJobsNotQueued: with --manage-all-jobs, a Job the jobset
// controller makes for a JobSet (even one carrying the quota label the
// replicated job's template gave it) is not held as a Job of its own: the
// JobSet's unit charges it.
func TestJobSetJobsNotQueued(t *testing.T) {
	w := startWebhook(t, []string{"job", "jobset"}, func(o *appOptions) { o.ManageAllJobs = true })
	ctx := context.Background()
	owner := jobSet(w.ns, "owner", true)
	if err := w.c.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	child := batchJob(w.ns, "owner-workers-0", false, quotaLabels())
	child.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, jobsetv1.SchemeGroupVersion.WithKind("JobSet"))}
	plain := batchJob(w.ns, "plain", false, nil)
	for _, j := range []client.Object{child, plain} {
		if err := w.c.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	if ptr.Deref(child.Spec.Suspend, false) {
		t.Error("the JobSet's Job was stored suspended")
	}
	if !ptr.Deref(plain.Spec.Suspend, false) {
		t.Error("a plain Job was not suspended with --manage-all-jobs: the case proves nothing")
	}
	waitUnit(t, w.c, w.ns, "plain", "unit of the plain Job", anyUnit)
	quiet(t)
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: "owner-workers-0"}, &schedv1alpha1.QueueUnit{}); client.IgnoreNotFound(err) != nil || err == nil {
		t.Errorf("unit of the JobSet's Job: err=%v", err)
	}
	var events corev1.EventList
	if err := w.c.List(ctx, &events, client.InNamespace(w.ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.InvolvedObject.Name == "owner-workers-0" && e.Reason == jobframework.EventSuspended {
			t.Errorf("the JobSet's Job was suspended: %s", e.Message)
		}
	}
}
