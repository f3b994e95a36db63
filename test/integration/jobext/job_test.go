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

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/job"
)

func batchJob(ns, name string, suspend bool, labels map[string]string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: batchv1.JobSpec{
			Suspend:     ptr.To(suspend),
			Parallelism: ptr.To[int32](2),
			Completions: ptr.To[int32](4),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name: "c", Image: "busybox",
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
						Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
					},
				}},
			}},
		},
	}
}

func getJob(t *testing.T, c client.Client, ns, name string) *batchv1.Job {
	t.Helper()
	j := &batchv1.Job{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
		t.Fatalf("get job: %v", err)
	}
	return j
}

func waitJobSuspend(t *testing.T, c client.Client, ns, name string, want bool) {
	t.Helper()
	eventually(t, "job suspend to be set", func(ctx context.Context) (bool, error) {
		j := &batchv1.Job{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
			return false, err
		}
		return ptr.Deref(j.Spec.Suspend, false) == want, nil
	})
}

// setJobStatus plays the Job controller, which envtest does not run.
func setJobStatus(t *testing.T, c client.Client, ns, name string, change func(*batchv1.Job)) {
	t.Helper()
	eventually(t, "job status write", func(ctx context.Context) (bool, error) {
		j := &batchv1.Job{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
			return false, err
		}
		change(j)
		return true, c.Status().Update(ctx, j)
	})
}

func TestJobLifecycle(t *testing.T) {
	c, ns := startManager(t, []string{job.Name}, nil)
	ctx := context.Background()
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{GenerateName: "high-"}, Value: 1000}
	if err := c.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, pc) })

	j := batchJob(ns, "my-job", true, map[string]string{schedv1alpha1.QuotaNameLabel: quota, "team": "a"})
	j.Annotations = map[string]string{"note": "kept"}
	j.Spec.Template.Spec.PriorityClassName = pc.Name
	if err := c.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	unit := waitUnit(t, c, ns, "my-job", "queue unit", anyUnit)

	wantRef := &corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Name: "my-job", Namespace: ns, UID: j.UID}
	if diff := cmp.Diff(wantRef, unit.Spec.ConsumerRef); diff != "" {
		t.Errorf("consumerRef (-want +got):\n%s", diff)
	}
	owner := metav1.GetControllerOf(unit)
	if owner == nil || owner.UID != j.UID || owner.Kind != "Job" {
		t.Errorf("controller owner = %+v, want the job", owner)
	}
	if unit.Labels[schedv1alpha1.QuotaNameLabel] != quota || unit.Labels["team"] != "a" || unit.Annotations["note"] != "kept" {
		t.Errorf("labels %v / annotations %v not copied from the job", unit.Labels, unit.Annotations)
	}
	if unit.Spec.Queue != quota {
		t.Errorf("queue = %q, want %q", unit.Spec.Queue, quota)
	}
	if unit.Spec.Priority == nil || *unit.Spec.Priority != 1000 || unit.Spec.PriorityClassName != pc.Name {
		t.Errorf("priority = %v class %q, want 1000 %q", unit.Spec.Priority, unit.Spec.PriorityClassName, pc.Name)
	}
	if len(unit.Spec.PodSet) != 1 || unit.Spec.PodSet[0].Name != job.PodSetName || unit.Spec.PodSet[0].Count != 2 {
		t.Errorf("podSet = %+v, want one set main x2", unit.Spec.PodSet)
	}
	wantRes := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("2Gi")}
	if diff := cmp.Diff(wantRes, unit.Spec.Resource, cmpQuantities); diff != "" {
		t.Errorf("resource (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantRes, unit.Spec.Request, cmpQuantities); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}

	// Spec follows the job while it waits.
	enqueue(t, c, ns, "my-job")
	eventually(t, "job update", func(ctx context.Context) (bool, error) {
		cur := getJob(t, c, ns, "my-job")
		cur.Spec.Parallelism = ptr.To[int32](3)
		return true, c.Update(ctx, cur)
	})
	waitUnit(t, c, ns, "my-job", "podSet count 3", func(u *schedv1alpha1.QueueUnit) bool {
		return len(u.Spec.PodSet) == 1 && u.Spec.PodSet[0].Count == 3
	})

	// A user's priority edit survives a sync.
	eventually(t, "priority edit", func(ctx context.Context) (bool, error) {
		u := &schedv1alpha1.QueueUnit{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "my-job"}, u); err != nil {
			return false, err
		}
		u.Spec.Priority = ptr.To[int32](5)
		return true, c.Update(ctx, u)
	})
	eventually(t, "job label update", func(ctx context.Context) (bool, error) {
		cur := getJob(t, c, ns, "my-job")
		cur.Labels["extra"] = "x"
		return true, c.Update(ctx, cur)
	})
	unit = waitUnit(t, c, ns, "my-job", "label copied", func(u *schedv1alpha1.QueueUnit) bool { return u.Labels["extra"] == "x" })
	if *unit.Spec.Priority != 5 {
		t.Errorf("user's priority edit overwritten: %d", *unit.Spec.Priority)
	}

	// Dequeued: the job starts.
	admit(t, c, ns, "my-job")
	waitJobSuspend(t, c, ns, "my-job", false)

	// Pods run: the unit says Running.
	setJobStatus(t, c, ns, "my-job", func(j *batchv1.Job) {
		now := metav1.Now()
		j.Status.StartTime = &now
		j.Status.Active = 3
		j.Status.Ready = ptr.To[int32](2)
	})
	waitUnit(t, c, ns, "my-job", "Running", phaseIs(schedv1alpha1.QueueUnitPhaseRunning))
	waitUnit(t, c, ns, "my-job", "podState", func(u *schedv1alpha1.QueueUnit) bool {
		return u.Status.PodState != nil && u.Status.PodState.Running == 2 && u.Status.PodState.Pending == 1 &&
			len(u.Status.Admissions) == 1 && u.Status.Admissions[0].Running == 2
	})

	// Eviction: suspended again, and back to Enqueued once no pods are left.
	evictUnit(t, c, ns, "my-job")
	waitJobSuspend(t, c, ns, "my-job", true)
	if u := waitUnit(t, c, ns, "my-job", "still Running", anyUnit); u.Status.Phase != schedv1alpha1.QueueUnitPhaseRunning {
		t.Errorf("unit left Running with active pods: %s", u.Status.Phase)
	}
	setJobStatus(t, c, ns, "my-job", func(j *batchv1.Job) {
		j.Status.Active = 0
		j.Status.Ready = ptr.To[int32](0)
		j.Status.StartTime = nil
	})
	waitUnit(t, c, ns, "my-job", "Enqueued after eviction", requeued)

	// Deleting the job deletes the unit.
	if err := c.Delete(ctx, getJob(t, c, ns, "my-job")); err != nil {
		t.Fatal(err)
	}
	waitUnitGone(t, c, ns, "my-job")
}

func TestJobFinishes(t *testing.T) {
	c, ns := startManager(t, []string{job.Name}, nil)
	ctx := context.Background()
	j := batchJob(ns, "done", true, map[string]string{schedv1alpha1.QuotaNameLabel: quota})
	if err := c.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	waitUnit(t, c, ns, "done", "queue unit", anyUnit)
	admit(t, c, ns, "done")
	waitJobSuspend(t, c, ns, "done", false)
	setJobStatus(t, c, ns, "done", func(j *batchv1.Job) {
		now := metav1.Now()
		j.Status.StartTime = &now
		j.Status.CompletionTime = &now
		j.Status.Succeeded = 4
		j.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
	})
	u := waitUnit(t, c, ns, "done", "Succeed", phaseIs(schedv1alpha1.QueueUnitPhaseSucceed))
	if !meta.IsStatusConditionTrue(u.Status.Conditions, schedv1alpha1.ConditionFinished) {
		t.Errorf("conditions %+v lack Finished=True", u.Status.Conditions)
	}
	if diff := cmp.Diff([]schedv1alpha1.ReclaimablePod{{Name: job.PodSetName, Count: 2}}, u.Status.ReclaimablePods); diff != "" {
		t.Errorf("reclaimablePods (-want +got):\n%s", diff)
	}
}

func TestJobWithoutQuotaLeftAlone(t *testing.T) {
	c, ns := startManager(t, []string{job.Name}, nil)
	ctx := context.Background()
	if err := c.Create(ctx, batchJob(ns, "no-quota", true, nil)); err != nil {
		t.Fatal(err)
	}
	// A job with the quota label is managed even when not submitted
	// suspended (the backstop holds it): it proves the manager is running.
	if err := c.Create(ctx, batchJob(ns, "managed", false, map[string]string{schedv1alpha1.QuotaNameLabel: quota})); err != nil {
		t.Fatal(err)
	}
	waitUnit(t, c, ns, "managed", "queue unit", anyUnit)
	waitJobSuspend(t, c, ns, "managed", true)
	quiet(t)
	list := &schedv1alpha1.QueueUnitList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Errorf("got %d units, want only the managed job's", len(list.Items))
	}
	if !ptr.Deref(getJob(t, c, ns, "no-quota").Spec.Suspend, false) {
		t.Errorf("unmanaged job was changed")
	}
	events := &corev1.EventList{}
	if err := c.List(ctx, events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.InvolvedObject.Name != "managed" {
			t.Errorf("event on an unmanaged job: %s %s", e.InvolvedObject.Name, e.Reason)
		}
	}
}

func TestManageAllJobsTakesUnsuspendedJob(t *testing.T) {
	c, ns := startManager(t, []string{job.Name}, func(o *appOptions) { o.ManageAllJobs = true })
	ctx := context.Background()
	if err := c.Create(ctx, batchJob(ns, "free", false, nil)); err != nil {
		t.Fatal(err)
	}
	waitJobSuspend(t, c, ns, "free", true)
	u := waitUnit(t, c, ns, "free", "queue unit", anyUnit)
	if u.Spec.Queue != "" || u.Annotations[framework.NoQuotaAnnotation] == "" {
		t.Errorf("unit of a job without quota: queue %q annotations %v", u.Spec.Queue, u.Annotations)
	}
	admit(t, c, ns, "free")
	waitJobSuspend(t, c, ns, "free", false)
}

func TestJobRunningTimeout(t *testing.T) {
	// The job is resumed for runningTimeout before it is suspended again: long
	// enough that a loaded machine still sees it resumed.
	cfg := writeConfig(t, `apiVersion: scheduling.k8s.io/v1
kind: KoordQueueControllersConfiguration
extensions:
  job:
    runningTimeout: 3s
    backoffTimeout: 2s
`)
	c, ns := startManager(t, []string{job.Name}, func(o *appOptions) { o.ConfigFile = cfg })
	ctx := context.Background()
	if err := c.Create(ctx, batchJob(ns, "slow", true, map[string]string{schedv1alpha1.QuotaNameLabel: quota})); err != nil {
		t.Fatal(err)
	}
	waitUnit(t, c, ns, "slow", "queue unit", anyUnit)
	admit(t, c, ns, "slow")
	waitJobSuspend(t, c, ns, "slow", false)
	u := waitUnit(t, c, ns, "slow", "TimeoutBackoff", phaseIs(schedv1alpha1.QueueUnitPhaseTimeoutBackoff))
	ev := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionEvicted)
	if ev == nil || ev.Status != metav1.ConditionTrue || ev.Reason != schedv1alpha1.ReasonBackoffTimeout {
		t.Errorf("Evicted condition = %+v, want True/BackoffTimeout", ev)
	}
	waitJobSuspend(t, c, ns, "slow", true)
	waitUnit(t, c, ns, "slow", "Enqueued after backoff", requeued)
}
