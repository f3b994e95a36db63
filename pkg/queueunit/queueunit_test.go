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

package queueunit

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// TestPhases mirrors the phase rows of docs/protocol.md: which phases wait
// for admission, which are charged to their quota, which are done.
func TestPhases(t *testing.T) {
	for _, tc := range []struct {
		phase                             schedv1alpha1.QueueUnitPhase
		pending, waiting, holds, finished bool
	}{
		{phase: schedv1alpha1.QueueUnitPhaseNone, pending: true, waiting: true},
		{phase: schedv1alpha1.QueueUnitPhaseEnqueued, pending: true, waiting: true},
		{phase: schedv1alpha1.QueueUnitPhaseReserved, holds: true},
		{phase: schedv1alpha1.QueueUnitPhaseDequeued, holds: true},
		{phase: schedv1alpha1.QueueUnitPhaseRunning, holds: true},
		// "spec.priority follows the job only while the unit waits (Enqueued, TimeoutBackoff)".
		{phase: schedv1alpha1.QueueUnitPhaseTimeoutBackoff, waiting: true},
		{phase: schedv1alpha1.QueueUnitPhaseSucceed, finished: true},
		{phase: schedv1alpha1.QueueUnitPhaseFailed, finished: true},
	} {
		if got := IsPending(tc.phase); got != tc.pending {
			t.Errorf("IsPending(%q) = %v, want %v", tc.phase, got, tc.pending)
		}
		if got := IsWaiting(tc.phase); got != tc.waiting {
			t.Errorf("IsWaiting(%q) = %v, want %v", tc.phase, got, tc.waiting)
		}
		if got := HoldsQuota(tc.phase); got != tc.holds {
			t.Errorf("HoldsQuota(%q) = %v, want %v", tc.phase, got, tc.holds)
		}
		if got := IsFinished(tc.phase); got != tc.finished {
			t.Errorf("IsFinished(%q) = %v, want %v", tc.phase, got, tc.finished)
		}
	}
}

// TestUsage mirrors the charge rule of docs/protocol.md.
func TestUsage(t *testing.T) {
	cpu := func(q string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
	}
	twoSets := func(p schedv1alpha1.QueueUnitPhase) *schedv1alpha1.QueueUnit {
		// 2 x 1 cpu + 3 x 500m: 3.5 cpu in all.
		return utiltesting.MakeQueueUnit("u", "ns").PodSet("a", 2, "cpu", "1").PodSet("b", 3, "cpu", "500m").Phase(p).Obj()
	}
	for _, tc := range []struct {
		name string
		unit *schedv1alpha1.QueueUnit
		want int64 // milli-cpu
	}{
		{name: "waiting units hold nothing", unit: twoSets(schedv1alpha1.QueueUnitPhaseEnqueued)},
		{name: "a finished unit holds nothing", unit: twoSets(schedv1alpha1.QueueUnitPhaseSucceed)},
		{name: "a unit in backoff holds nothing", unit: twoSets(schedv1alpha1.QueueUnitPhaseTimeoutBackoff)},
		{name: "no admission recorded: the whole request", unit: twoSets(schedv1alpha1.QueueUnitPhaseDequeued), want: 3500},
		{name: "admissions: replicas x resources", unit: func() *schedv1alpha1.QueueUnit {
			u := twoSets(schedv1alpha1.QueueUnitPhaseRunning)
			u.Status.Admissions = []schedv1alpha1.Admission{
				{Name: "a", Replicas: 2, Resources: cpu("1")},
				{Name: "b", Replicas: 1, Resources: cpu("500m")},
			}
			return u
		}(), want: 2500},
		{name: "finished pods give their share back", unit: func() *schedv1alpha1.QueueUnit {
			u := twoSets(schedv1alpha1.QueueUnitPhaseRunning)
			u.Status.Admissions = []schedv1alpha1.Admission{
				{Name: "a", Replicas: 2, Resources: cpu("1")},
				{Name: "b", Replicas: 3, Resources: cpu("500m")},
			}
			u.Status.ReclaimablePods = []schedv1alpha1.ReclaimablePod{{Name: "a", Count: 1}, {Name: "b", Count: 5}}
			return u
		}(), want: 1000},
		{name: "reserved for admission checks is charged", unit: twoSets(schedv1alpha1.QueueUnitPhaseReserved), want: 3500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Usage(tc.unit)[corev1.ResourceCPU]; got != tc.want {
				t.Errorf("cpu charged %dm, want %dm", got, tc.want)
			}
		})
	}
}

// TestRequestFromPodSets checks the demand of a unit without spec.resource
// is counted from its pod sets.
func TestRequestFromPodSets(t *testing.T) {
	u := utiltesting.MakeQueueUnit("u", "ns").PodSet("a", 4, "cpu", "250m", "memory", "1Gi").Obj()
	u.Spec.Resource = nil
	got := Request(u)
	want := schedtypes.FromList(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("4Gi")})
	if got[corev1.ResourceCPU] != want[corev1.ResourceCPU] || got[corev1.ResourceMemory] != want[corev1.ResourceMemory] {
		t.Errorf("request %v, want %v", got, want)
	}
}

// WaitReason is the reason SetWaiting wrote, and nothing else.
func TestWaitReason(t *testing.T) {
	now := metav1.Now()
	waiting := utiltesting.MakeQueueUnit("a", "ns").Obj()
	SetWaiting(waiting, "InsufficientQuota", "insufficient quota: ...", now)
	evicted := utiltesting.MakeQueueUnit("b", "ns").Phase(schedv1alpha1.QueueUnitPhaseEnqueued).Obj()
	SetCondition(evicted, schedv1alpha1.ConditionQuotaReserved, metav1.ConditionFalse, "Preempted", "preempted by ns/x", now)
	admitted := waiting.DeepCopy()
	admitted.Status.Phase = schedv1alpha1.QueueUnitPhaseDequeued
	for _, tc := range []struct {
		name string
		u    *schedv1alpha1.QueueUnit
		want string
	}{
		{"told why it waits", waiting, "InsufficientQuota"},
		{"new, not told yet", utiltesting.MakeQueueUnit("c", "ns").Phase(schedv1alpha1.QueueUnitPhaseEnqueued).Obj(), ""},
		{"condition of an eviction, no message", evicted, ""},
		{"admitted", admitted, ""},
	} {
		if got := WaitReason(tc.u); got != tc.want {
			t.Errorf("%s: reason %q, want %q", tc.name, got, tc.want)
		}
	}
}
