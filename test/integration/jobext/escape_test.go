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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	jobframework "github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/job"
)

// Attacks on the quota from issue 19 (items 3 and 4): each must be refused.

// waitEvent waits for an event of reason on the named object and returns its
// message.
func waitEvent(t *testing.T, c client.Client, ns, name, reason string) string {
	t.Helper()
	var msg string
	eventually(t, "event "+reason+" on "+name, func(ctx context.Context) (bool, error) {
		list := &corev1.EventList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Name == name && e.Reason == reason {
				msg = e.Message
				return true, nil
			}
		}
		return false, nil
	})
	return msg
}

// Raising a running Job's parallelism does not run more pods than were
// admitted: the Job is suspended and its unit queued again at the new size.
// runningJob creates a suspended batch Job of the given parallelism (8
// completions) in quota, admits its unit, and plays the Job controller until
// the unit is Running with every pod active.
func runningJob(t *testing.T, c client.Client, ns, name string, parallelism int32) {
	t.Helper()
	j := batchJob(ns, name, true, map[string]string{schedv1alpha1.QuotaNameLabel: quota})
	j.Spec.Parallelism = ptr.To(parallelism)
	j.Spec.Completions = ptr.To[int32](8)
	if err := c.Create(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	waitUnit(t, c, ns, name, "queue unit", anyUnit)
	admit(t, c, ns, name)
	waitJobSuspend(t, c, ns, name, false)
	setJobStatus(t, c, ns, name, func(j *batchv1.Job) {
		now := metav1.Now()
		j.Status.StartTime = &now
		j.Status.Active = parallelism
		j.Status.Ready = ptr.To(parallelism)
	})
	waitUnit(t, c, ns, name, "Running", phaseIs(schedv1alpha1.QueueUnitPhaseRunning))
}

func TestRaisedParallelismIsRequeued(t *testing.T) {
	c, ns := startManager(t, []string{job.Name}, nil)
	runningJob(t, c, ns, "grows", 2)

	// The attack: two admitted pods become four.
	eventually(t, "parallelism raised", func(ctx context.Context) (bool, error) {
		cur := getJob(t, c, ns, "grows")
		cur.Spec.Parallelism = ptr.To[int32](4)
		return true, c.Update(ctx, cur)
	})
	waitJobSuspend(t, c, ns, "grows", true)
	if msg := waitEvent(t, c, ns, "grows", jobframework.EventJobGrew); !strings.Contains(msg, "from 2 to 4 pods") {
		t.Errorf("JobGrew event says %q, want the set's both sizes", msg)
	}
	// Its pods still hold the admitted quota until they are gone.
	if u := waitUnit(t, c, ns, "grows", "unit", anyUnit); u.Status.Phase != schedv1alpha1.QueueUnitPhaseRunning || len(u.Status.Admissions) != 1 {
		t.Errorf("unit gave its quota back with pods active: phase %s admissions %v", u.Status.Phase, u.Status.Admissions)
	}
	setJobStatus(t, c, ns, "grows", func(j *batchv1.Job) {
		j.Status.Active = 0
		j.Status.Ready = ptr.To[int32](0)
	})
	u := waitUnit(t, c, ns, "grows", "queued again at the new size", func(u *schedv1alpha1.QueueUnit) bool {
		return requeued(u) && len(u.Spec.PodSet) == 1 && u.Spec.PodSet[0].Count == 4
	})
	want := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("4Gi")}
	if diff := cmp.Diff(want, u.Spec.Resource, cmpQuantities); diff != "" {
		t.Errorf("resource at the new size (-want +got):\n%s", diff)
	}

	// Admitted at the new size, it runs.
	admit(t, c, ns, "grows")
	waitJobSuspend(t, c, ns, "grows", false)
}

// A Job whose containers ask nothing is charged what the namespace's
// LimitRange gives its pods.
func TestLimitRangeDefaultsAreCharged(t *testing.T) {
	c, ns := startManager(t, []string{job.Name}, nil)
	ctx := context.Background()
	lr := &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: ns},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type:           corev1.LimitTypeContainer,
			DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
			// No defaultRequest for memory: the API server copies the default limit.
			Default: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		}}},
	}
	if err := c.Create(ctx, lr); err != nil {
		t.Fatal(err)
	}
	j := batchJob(ns, "asks-nothing", true, map[string]string{schedv1alpha1.QuotaNameLabel: quota})
	j.Spec.Template.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
	j.Spec.Template.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
	if err := c.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	u := waitUnit(t, c, ns, "asks-nothing", "queue unit", anyUnit)
	want := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}
	if diff := cmp.Diff(want, u.Spec.Resource, cmpQuantities); diff != "" {
		t.Errorf("resource of 2 pods under the LimitRange (-want +got):\n%s", diff)
	}
}

// A request beyond what quota can count (it read as zero) is refused: no
// unit, and a Warning that names the value.
func TestOverflowingRequestIsRefused(t *testing.T) {
	c, ns := startManager(t, []string{job.Name}, nil)
	ctx := context.Background()
	j := batchJob(ns, "huge", true, map[string]string{schedv1alpha1.QuotaNameLabel: quota})
	j.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1e30")
	if err := c.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	msg := waitEvent(t, c, ns, "huge", jobframework.EventInvalidJob)
	if !strings.Contains(msg, "invalid request") || !strings.Contains(msg, "1e30") {
		t.Errorf("InvalidJob says %q, want the invalid value", msg)
	}
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "huge"}, &schedv1alpha1.QueueUnit{})
	if client.IgnoreNotFound(err) != nil || err == nil {
		t.Fatalf("a unit exists for a job asking cpu 1e30 (err %v)", err)
	}
}

// A priority annotation that is not a number is said once in a Warning
// naming it, with no unit, instead of a reconcile retried forever; fixing the
// annotation queues the job.
func TestPriorityNotANumberIsRefused(t *testing.T) {
	c, ns := startManager(t, []string{job.Name}, nil)
	ctx := context.Background()
	j := batchJob(ns, "urgent", true, map[string]string{schedv1alpha1.QuotaNameLabel: quota})
	j.Annotations = map[string]string{schedv1alpha1.PriorityAnnotation: "high"}
	if err := c.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	msg := waitEvent(t, c, ns, "urgent", jobframework.EventInvalidJob)
	if !strings.Contains(msg, schedv1alpha1.PriorityAnnotation) || !strings.Contains(msg, `"high"`) {
		t.Errorf("InvalidJob says %q, want the annotation and its value", msg)
	}
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "urgent"}, &schedv1alpha1.QueueUnit{})
	if client.IgnoreNotFound(err) != nil || err == nil {
		t.Fatalf("a unit exists for a job with priority %q (err %v)", "high", err)
	}
	patch := client.MergeFrom(j.DeepCopy())
	j.Annotations[schedv1alpha1.PriorityAnnotation] = "7"
	if err := c.Patch(ctx, j, patch); err != nil {
		t.Fatal(err)
	}
	u := waitUnit(t, c, ns, "urgent", "queue unit", anyUnit)
	if u.Spec.Priority == nil || *u.Spec.Priority != 7 {
		t.Errorf("unit priority %v after the fix, want 7", u.Spec.Priority)
	}
}

// Deleting a job does not free its quota while its pods terminate: the unit
// stays, charged, until they are gone.
func TestDeletedJobHoldsQuotaUntilPodsGone(t *testing.T) {
	c, ns := startManager(t, []string{job.Name}, nil)
	ctx := context.Background()
	j := batchJob(ns, "leaving", true, map[string]string{schedv1alpha1.QuotaNameLabel: quota})
	if err := c.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	waitUnit(t, c, ns, "leaving", "queue unit", anyUnit)
	admit(t, c, ns, "leaving")
	waitJobSuspend(t, c, ns, "leaving", false)
	j = getJob(t, c, ns, "leaving")
	// envtest runs no kubelet: a finalizer plays the long grace period.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "leaving-0", Namespace: ns, Finalizers: []string{"test.koord-queue/terminating"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: j.Name, UID: j.UID, Controller: ptr.To(true)}},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, j); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	waitUnit(t, c, ns, "leaving", "unit deleted but held", func(u *schedv1alpha1.QueueUnit) bool { return u.DeletionTimestamp != nil })
	quiet(t)
	u := waitUnit(t, c, ns, "leaving", "unit still there", anyUnit)
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseDequeued || len(u.Status.Admissions) != 1 {
		t.Errorf("held unit does not hold its admission: phase %s admissions %v", u.Status.Phase, u.Status.Admissions)
	}

	// The pod is gone: so is the unit.
	eventually(t, "pod released", func(ctx context.Context) (bool, error) {
		cur := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), cur); err != nil {
			return false, err
		}
		cur.Finalizers = nil
		return true, c.Update(ctx, cur)
	})
	waitUnitGone(t, c, ns, "leaving")
}

// Lowering a running Job's parallelism gives the admitted pods it no longer
// runs back, once its extra pods are gone.
func TestLoweredParallelismGivesBack(t *testing.T) {
	c, ns := startManager(t, []string{job.Name}, nil)
	runningJob(t, c, ns, "shrinks", 4)
	eventually(t, "parallelism lowered", func(ctx context.Context) (bool, error) {
		cur := getJob(t, c, ns, "shrinks")
		cur.Spec.Parallelism = ptr.To[int32](1)
		return true, c.Update(ctx, cur)
	})
	// Three pods terminate: they keep their share.
	setJobStatus(t, c, ns, "shrinks", func(j *batchv1.Job) {
		j.Status.Active = 1
		j.Status.Ready = ptr.To[int32](1)
		j.Status.Terminating = ptr.To[int32](3)
	})
	u := waitUnit(t, c, ns, "shrinks", "pods reported", func(u *schedv1alpha1.QueueUnit) bool {
		return u.Status.PodState != nil && u.Status.PodState.Pending == 3
	})
	if len(u.Status.ReclaimablePods) != 0 || ptr.Deref(getJob(t, c, ns, "shrinks").Spec.Suspend, false) {
		t.Fatalf("terminating pods gave quota back (%v), or the job was held", u.Status.ReclaimablePods)
	}
	setJobStatus(t, c, ns, "shrinks", func(j *batchv1.Job) { j.Status.Terminating = ptr.To[int32](0) })
	waitUnit(t, c, ns, "shrinks", "three pods given back", func(u *schedv1alpha1.QueueUnit) bool {
		return len(u.Status.ReclaimablePods) == 1 && u.Status.ReclaimablePods[0].Count == 3 && len(u.Status.Admissions) == 1 &&
			u.Status.Admissions[0].Replicas == 4
	})
}

// The KubeRay autoscaler raising a worker group's replicas beyond what was
// admitted is caught like a raised parallelism: the cluster is suspended.
func TestRayClusterAutoscalingIsRequeued(t *testing.T) {
	var tc kindCase
	for _, k := range rayCases() {
		if k.ext == "raycluster" {
			tc = k
		}
	}
	c, ns := startManager(t, []string{tc.ext}, nil)
	ctx := context.Background()
	if err := c.Create(ctx, tc.newJob(ns)); err != nil {
		t.Fatal(err)
	}
	unitName := "ray-raycluster"
	waitUnit(t, c, ns, unitName, "queue unit", anyUnit)
	admit(t, c, ns, unitName)
	waitSuspend(t, c, tc, ns, "ray", false)
	writePods(t, c, tc, ns, "ray", true)
	waitUnit(t, c, ns, unitName, "Running", phaseIs(schedv1alpha1.QueueUnitPhaseRunning))

	// The autoscaler's write: two admitted workers become four.
	eventually(t, "replicas raised", func(ctx context.Context) (bool, error) {
		rc := &rayv1.RayCluster{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ray"}, rc); err != nil {
			return false, err
		}
		rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](4)
		return true, c.Update(ctx, rc)
	})
	waitSuspend(t, c, tc, ns, "ray", true)
	if msg := waitEvent(t, c, ns, unitName, jobframework.EventJobGrew); !strings.Contains(msg, "pod set small grew from 2 to 4 pods") {
		t.Errorf("JobGrew event on the unit says %q", msg)
	}
	writePods(t, c, tc, ns, "ray", false)
	waitUnit(t, c, ns, unitName, "queued again at the new size", func(u *schedv1alpha1.QueueUnit) bool {
		return requeued(u) && len(u.Spec.PodSet) == 2 && u.Spec.PodSet[1].Count == 4
	})
}
