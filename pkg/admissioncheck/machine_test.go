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

package admissioncheck

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func reserved(states ...schedv1alpha1.AdmissionCheckStateType) *schedv1alpha1.QueueUnit {
	u := &schedv1alpha1.QueueUnit{Status: schedv1alpha1.QueueUnitStatus{Phase: schedv1alpha1.QueueUnitPhaseReserved, LastAllocateTime: &metav1.Time{Time: t0}}}
	for i, s := range states {
		u.Status.AdmissionChecks = append(u.Status.AdmissionChecks, schedv1alpha1.AdmissionCheckState{Name: []string{"a", "b"}[i], State: s})
	}
	return u
}

func TestDecide(t *testing.T) {
	checks := map[string]Check{"a": {Exists: true, RetryDelay: time.Minute}, "b": {Exists: true}}
	cases := []struct {
		name   string
		unit   *schedv1alpha1.QueueUnit
		checks map[string]Check
		now    time.Time
		want   Decision
	}{
		{"all ready", reserved(schedv1alpha1.CheckStateReady, schedv1alpha1.CheckStateReady), checks, t0, Decision{Action: Admit}},
		{"one pending", reserved(schedv1alpha1.CheckStateReady, schedv1alpha1.CheckStatePending), checks, t0.Add(time.Minute),
			Decision{Action: Wait, RequeueAfter: 9 * time.Minute, Message: "waiting for admission checks b"}},
		{"retry honours the check's delay", reserved(schedv1alpha1.CheckStateRetry, schedv1alpha1.CheckStatePending), checks, t0,
			Decision{Action: Backoff, Reason: queueunit.ReasonAdmissionCheckRetry, RequeueAt: t0.Add(time.Minute), Message: "admission check a asked to retry: "}},
		{"rejected", reserved(schedv1alpha1.CheckStateReady, schedv1alpha1.CheckStateRejected), checks, t0,
			Decision{Action: Backoff, Reason: queueunit.ReasonAdmissionCheckRejected, RequeueAt: t0.Add(10 * time.Second), Message: "admission check b rejected the unit: "}},
		{"silence past the timeout", reserved(schedv1alpha1.CheckStatePending), checks, t0.Add(10 * time.Minute),
			Decision{Action: Backoff, Reason: queueunit.ReasonAdmissionCheckTimeout, RequeueAt: t0.Add(10*time.Minute + 10*time.Second), Message: "admission checks a did not answer within 10m0s"}},
		{"missing check waits and says so", reserved(schedv1alpha1.CheckStatePending), map[string]Check{}, t0.Add(4 * time.Minute),
			Decision{Action: Wait, Missing: []string{"a"}, RequeueAfter: 6 * time.Minute, Message: "waiting for admission checks a; AdmissionCheck a not found"}},
		// A check that names no AdmissionCheck never keeps quota reserved past the timeout.
		{"missing check times out", reserved(schedv1alpha1.CheckStatePending), map[string]Check{}, t0.Add(10 * time.Minute),
			Decision{Action: Backoff, Reason: queueunit.ReasonAdmissionCheckTimeout, RequeueAt: t0.Add(10*time.Minute + 10*time.Second), Missing: []string{"a"},
				Message: "admission checks a did not answer within 10m0s (AdmissionCheck a not found)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(tc.unit, tc.checks, tc.now, 10*time.Minute, 10*time.Second)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMatching(t *testing.T) {
	checks := []schedv1alpha1.AdmissionCheckWithSelector{
		{Name: "all"},
		{Name: "prov", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"requires-provisioning": "true"}}},
	}
	got, err := Matching(checks, map[string]string{"requires-provisioning": "true"})
	if err != nil || !cmp.Equal(got, []string{"all", "prov"}) {
		t.Errorf("matching = %v, %v", got, err)
	}
	got, _ = Matching(checks, nil)
	if !cmp.Equal(got, []string{"all"}) {
		t.Errorf("unlabelled = %v", got)
	}
}

func TestBackoffSequence(t *testing.T) {
	var got []time.Duration
	for n := int32(1); n <= 10; n++ {
		got = append(got, BackoffFor(n, 0.5))
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second,
		320 * time.Second, 640 * time.Second, 1280 * time.Second, 30 * time.Minute, 30 * time.Minute}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if lo, hi := BackoffFor(1, 0), BackoffFor(1, 0.999999); lo != 9*time.Second || hi < 10999*time.Millisecond {
		t.Errorf("jitter bounds %v %v, want 9s..11s", lo, hi)
	}
}

// The execution budget counts only running time and is banked across evictions.
func TestExecutionBudgetAcrossTwoEvictions(t *testing.T) {
	u := &schedv1alpha1.QueueUnit{Spec: schedv1alpha1.QueueUnitSpec{MaximumExecutionTimeSeconds: ptr.To[int32](100)}}
	run := func(start time.Time) {
		u.Status.Phase = schedv1alpha1.QueueUnitPhaseRunning
		u.Status.Conditions = []metav1.Condition{{Type: schedv1alpha1.ConditionPodsReady, Status: metav1.ConditionTrue, LastTransitionTime: metav1.Time{Time: start}}}
	}
	evict := func(at time.Time) {
		u.Status.AccumulatedPastExecutionTimeSeconds = ptr.To(int32(queueunit.ExecutionUsed(u, at).Seconds()))
		u.Status.Phase = schedv1alpha1.QueueUnitPhaseEnqueued
		u.Status.Conditions = nil
	}
	run(t0)
	evict(t0.Add(30 * time.Second))
	if got := queueunit.ExecutionUsed(u, t0.Add(time.Hour)); got != 30*time.Second {
		t.Fatalf("used while queued = %v, want 30s", got)
	}
	run(t0.Add(time.Hour))
	evict(t0.Add(time.Hour + 50*time.Second))
	run(t0.Add(2 * time.Hour))
	if got := queueunit.ExecutionUsed(u, t0.Add(2*time.Hour+19*time.Second)); got != 99*time.Second || got >= queueunit.Budget(u) {
		t.Errorf("used = %v, want 99s, under the budget", got)
	}
	if got := queueunit.ExecutionUsed(u, t0.Add(2*time.Hour+20*time.Second)); got < queueunit.Budget(u) {
		t.Errorf("used = %v, want the 100s budget reached", got)
	}
}
