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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// "an admitted unit whose pods koord-scheduler refuses for quota is to say
// so": once per refusal, dated from when it began but never before the
// admission, ended when no pod is refused, and ended with the admission.
func TestRefusedByQuota(t *testing.T) {
	u := admitted(schedv1alpha1.QueueUnitPhaseDequeued) // Admitted=True at t1
	if _, ok := RefusedByQuotaSince(u); ok {
		t.Fatal("a unit never refused is refused")
	}
	if EndRefusedByQuota(u, t2) || condition(u, ConditionPodsRefusedByQuota) != nil {
		t.Fatal("ending a refusal that never began added a condition")
	}
	before := metav1.NewTime(created) // a pod refused before this admission
	if !MarkRefusedByQuota(u, "pod p: Insufficient quotas", before) {
		t.Fatal("the first refusal was not told")
	}
	if since, ok := RefusedByQuotaSince(u); !ok || !since.Equal(&t1) {
		t.Errorf("refused since %v %v, want the admission %v", since, ok, t1)
	}
	if MarkRefusedByQuota(u, "pod q: Insufficient quotas, used: more", t2) {
		t.Error("a refusal already told was told again")
	}
	c := condition(u, ConditionPodsRefusedByQuota)
	if c.Status != metav1.ConditionTrue || c.Reason != ReasonPodsRefusedByQuota || c.Message != "pod p: Insufficient quotas" || !c.LastTransitionTime.Equal(&t1) {
		t.Errorf("condition %+v, want True/%s with the first message, at %v", c, ReasonPodsRefusedByQuota, t1)
	}

	if !EndRefusedByQuota(u, t2) {
		t.Fatal("the refusal did not end")
	}
	if c := condition(u, ConditionPodsRefusedByQuota); c.Status != metav1.ConditionFalse || c.Reason != ReasonNoPodRefused {
		t.Errorf("ended condition %+v, want False/%s", c, ReasonNoPodRefused)
	}
	if !MarkRefusedByQuota(u, "pod r: Insufficient quotas", t3) {
		t.Fatal("a second refusal was not told")
	}
	if since, _ := RefusedByQuotaSince(u); !since.Equal(&t3) {
		t.Errorf("second refusal since %v, want %v", since, t3)
	}

	// The running timeout's path clears the admission, and the refusal with it.
	MarkRunningTimeout(u, "pods refused for quota", t3)
	if _, ok := RefusedByQuotaSince(u); ok {
		t.Error("the refusal outlived the admission")
	}
}

// A True condition left from an earlier admission does not count, and a new
// refusal replaces it with its own time.
func TestStaleRefusal(t *testing.T) {
	u := admitted(schedv1alpha1.QueueUnitPhaseRunning)
	SetCondition(u, ConditionPodsRefusedByQuota, metav1.ConditionTrue, ReasonPodsRefusedByQuota, "old", metav1.NewTime(created))
	if _, ok := RefusedByQuotaSince(u); ok {
		t.Fatal("a refusal from before the admission counts")
	}
	later := metav1.NewTime(t2.Add(time.Second))
	if !MarkRefusedByQuota(u, "new", later) {
		t.Fatal("a new refusal after a stale one was not told")
	}
	if since, ok := RefusedByQuotaSince(u); !ok || !since.Equal(&later) {
		t.Errorf("refused since %v %v, want %v", since, ok, later)
	}
}
