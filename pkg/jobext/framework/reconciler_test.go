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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// TestRunningTimeout walks a dequeued unit whose pods never run through
// TimeoutBackoff and back to Enqueued on a fake clock.
func TestRunningTimeout(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(t0)
	sets := onePodSet()
	job := newFakeJob("j", map[string]string{schedv1alpha1.QuotaNameLabel: "q"}, nil, sets)
	ext := fakeExtension(sets, JobStatus{})
	unit := &schedv1alpha1.QueueUnit{
		ObjectMeta: metav1.ObjectMeta{Name: "j-fake", Namespace: "ns"},
		Spec: schedv1alpha1.QueueUnitSpec{ConsumerRef: &corev1.ObjectReference{
			APIVersion: "v1", Kind: "ConfigMap", Name: "j", Namespace: "ns", UID: job.cm.UID,
		}},
		Status: schedv1alpha1.QueueUnitStatus{
			Phase:            schedv1alpha1.QueueUnitPhaseDequeued,
			LastAllocateTime: &metav1.Time{Time: t0},
			Admissions:       []schedv1alpha1.Admission{{Name: "main", Replicas: 1}},
		},
	}
	c := fakeClient(job.cm, unit)
	r := NewReconciler(c, ext, events.NewFakeRecorder(100), clk, ReconcilerOptions{RunningTimeout: 10 * time.Second, BackoffTimeout: 30 * time.Second})
	ctx := context.Background()

	step := func(d time.Duration, wantRequeue time.Duration, wantPhase schedv1alpha1.QueueUnitPhase, wantSuspended bool) *schedv1alpha1.QueueUnit {
		t.Helper()
		clk.Step(d)
		res := reconcileJob(t, r, "ns")
		if res.RequeueAfter != wantRequeue {
			t.Errorf("at +%s: requeueAfter = %s, want %s", clk.Since(t0), res.RequeueAfter, wantRequeue)
		}
		got, err := storedUnit(c, "ns")
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Phase != wantPhase {
			t.Errorf("at +%s: phase = %s, want %s", clk.Since(t0), got.Status.Phase, wantPhase)
		}
		if s := storedSuspended(t, c, job); s != wantSuspended {
			t.Errorf("at +%s: suspended = %v, want %v", clk.Since(t0), s, wantSuspended)
		}
		return got
	}

	step(4*time.Second, 6*time.Second, schedv1alpha1.QueueUnitPhaseDequeued, false)
	u := step(6*time.Second, 30*time.Second, schedv1alpha1.QueueUnitPhaseTimeoutBackoff, true)
	ev := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionEvicted)
	if ev == nil || ev.Status != metav1.ConditionTrue || ev.Reason != schedv1alpha1.ReasonBackoffTimeout {
		t.Errorf("Evicted = %+v, want True/BackoffTimeout", ev)
	}
	if len(u.Status.Admissions) != 0 {
		t.Errorf("admissions kept in TimeoutBackoff: %+v", u.Status.Admissions)
	}
	step(10*time.Second, 20*time.Second, schedv1alpha1.QueueUnitPhaseTimeoutBackoff, true)
	u = step(20*time.Second, 0, schedv1alpha1.QueueUnitPhaseEnqueued, true)

	// Nothing changed: no write.
	again := step(time.Second, 0, schedv1alpha1.QueueUnitPhaseEnqueued, true)
	if again.ResourceVersion != u.ResourceVersion {
		t.Errorf("unchanged unit written: resourceVersion %s -> %s", u.ResourceVersion, again.ResourceVersion)
	}

	// A unit reserved long ago that spent its time in admission checks: the
	// timeout counts from Admitted=True (Dequeued), not from lastAllocateTime.
	clk.SetTime(t0.Add(time.Hour))
	dequeued := metav1.NewTime(clk.Now())
	u.Status.Phase = schedv1alpha1.QueueUnitPhaseDequeued
	u.Status.LastAllocateTime = &metav1.Time{Time: t0}
	u.Status.Admissions = []schedv1alpha1.Admission{{Name: "main", Replicas: 1}}
	u.Status.Conditions = []metav1.Condition{
		{Type: schedv1alpha1.ConditionQuotaReserved, Status: metav1.ConditionTrue, Reason: "Reserved", LastTransitionTime: metav1.Time{Time: t0}},
		{Type: schedv1alpha1.ConditionAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted", LastTransitionTime: dequeued},
	}
	if err := c.Status().Update(ctx, u); err != nil {
		t.Fatal(err)
	}
	step(0, 10*time.Second, schedv1alpha1.QueueUnitPhaseDequeued, false)
	step(3*time.Second, 7*time.Second, schedv1alpha1.QueueUnitPhaseDequeued, false)
	// The re-check it asked for is the only event: it times the unit out.
	step(7*time.Second, 30*time.Second, schedv1alpha1.QueueUnitPhaseTimeoutBackoff, true)
}
