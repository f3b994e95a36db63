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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/app"
	jobframework "github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/job"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
)

// Beside Koordinator (docs/protocol.md): what koord-scheduler and others do
// to the pods of an admitted unit. envtest runs no scheduler: the test
// writes the pods' status as koord-scheduler v1.7.0 would.

// koordRefusal is koord-scheduler v1.7.0's refusal of a pod for quota, as it
// reaches the pod's PodScheduled condition.
const koordRefusal = "0/1 nodes are available: Insufficient quotas, quotaName: team-a, runtime: cpu:1, used: cpu:1, pod's request: cpu:1, exceedDimensions: [cpu]."

// admittedJob creates a batch Job in quota, admits its unit and waits for
// the job to be resumed; it returns the job as stored.
func admittedJob(t *testing.T, c client.Client, ns, name string) client.Object {
	t.Helper()
	if err := c.Create(context.Background(), batchJob(ns, name, true, map[string]string{schedv1alpha1.QuotaNameLabel: quota})); err != nil {
		t.Fatal(err)
	}
	waitUnit(t, c, ns, name, "queue unit", anyUnit)
	admit(t, c, ns, name)
	waitJobSuspend(t, c, ns, name, false)
	return getJob(t, c, ns, name)
}

// waitEventOn waits for an event of reason on the object of kind and name,
// and returns its message.
func waitEventOn(t *testing.T, c client.Client, ns, kind, name, reason string) string {
	t.Helper()
	var msg string
	eventually(t, "event "+reason+" on "+kind+" "+name, func(ctx context.Context) (bool, error) {
		list := &corev1.EventList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name && e.Reason == reason {
				msg = e.Message
				return true, nil
			}
		}
		return false, nil
	})
	return msg
}

// createUnitPod creates a pod labelled with unit (as resume labels the job's
// templates), controlled by owner when not nil, then writes its status.
func createUnitPod(t *testing.T, c client.Client, ns, name, unit string, owner client.Object, status corev1.PodStatus) {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: jobframework.PodLabels(quota, unit)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	if owner != nil {
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: owner.GetName(), UID: owner.GetUID(), Controller: ptr.To(true)}}
	}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status = status
	if err := c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
}

// A pod koord-scheduler refuses for quota, none running: the refusal is told
// on the job and the unit, and after --quota-refusal-timeout the job is
// suspended and its unit sent to TimeoutBackoff, its quota given back.
func TestQuotaRefusalSuspendsJob(t *testing.T) {
	c, ns := startManager(t, []string{job.Name}, func(o *app.Options) { o.QuotaRefusalTimeout = 2 * time.Second })
	j := admittedJob(t, c, ns, "refused")
	createUnitPod(t, c, ns, "refused-0", "refused", j, corev1.PodStatus{
		Phase: corev1.PodPending,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, Message: koordRefusal, LastTransitionTime: metav1.Now()}},
	})

	for _, kind := range []string{"Job", "QueueUnit"} {
		if msg := waitEventOn(t, c, ns, kind, "refused", jobframework.EventPodsRefusedByQuota); !strings.Contains(msg, "refused-0") || !strings.Contains(msg, koordRefusal) {
			t.Errorf("%s event on the %s %q does not name the pod and Koordinator's message", jobframework.EventPodsRefusedByQuota, kind, msg)
		}
	}
	u := waitUnit(t, c, ns, "refused", "TimeoutBackoff", phaseIs(schedv1alpha1.QueueUnitPhaseTimeoutBackoff))
	waitJobSuspend(t, c, ns, "refused", true)
	if len(u.Status.Admissions) != 0 || !meta.IsStatusConditionFalse(u.Status.Conditions, schedv1alpha1.ConditionQuotaReserved) {
		t.Errorf("unit still holds its admission: %+v", u.Status)
	}
	if qr := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionQuotaReserved); !strings.Contains(qr.Message, "quota "+quota) || !strings.Contains(qr.Message, koordRefusal) {
		t.Errorf("QuotaReserved message %q does not name the quota and Koordinator's refusal", qr.Message)
	}
	if c := meta.FindStatusCondition(u.Status.Conditions, queueunit.ConditionPodsRefusedByQuota); c != nil && c.Status == metav1.ConditionTrue {
		t.Errorf("refusal condition outlived the admission: %+v", c)
	}
}

// A pod of the unit that something else evicted (here a pod the job does
// not control, reached by its unit label alone) is told on the job and the
// unit; the job is left running.
func TestPodEvictedElsewhereIsTold(t *testing.T) {
	c, ns := startManager(t, []string{job.Name}, nil)
	admittedJob(t, c, ns, "evicted")
	createUnitPod(t, c, ns, "evicted-worker", "evicted", nil, corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting", LastTransitionTime: metav1.Now()}},
	})
	for _, kind := range []string{"Job", "QueueUnit"} {
		if msg := waitEventOn(t, c, ns, kind, "evicted", jobframework.EventPodsEvictedElsewhere); !strings.Contains(msg, "evicted-worker") || !strings.Contains(msg, "EvictionByEvictionAPI") {
			t.Errorf("event on the %s %q does not name the pod and why", kind, msg)
		}
	}
	if j := getJob(t, c, ns, "evicted"); ptr.Deref(j.Spec.Suspend, false) {
		t.Error("the job was suspended for an eviction it did not make")
	}
	if u := waitUnit(t, c, ns, "evicted", "queue unit", anyUnit); !queueunit.HoldsQuota(u.Status.Phase) {
		t.Errorf("unit phase %s, want it still admitted", u.Status.Phase)
	}
}
