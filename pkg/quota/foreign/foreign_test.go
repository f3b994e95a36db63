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

package foreign

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

var twoCPU = schedtypes.Resources{corev1.ResourceCPU: 2000}

func index() *Index {
	return NewIndex([]Quota{
		{Name: "team-a", Namespace: "team-a"},
		{Name: "shared", Namespace: "ops", Namespaces: []string{"team-c", "team-d"}},
		{Name: "also-d", Namespace: "ops", Namespaces: []string{"team-d"}},
		// Named like a namespace, but kept in another: not the namespace's quota.
		{Name: "team-e", Namespace: "quotas"},
	})
}

// TestQuotaOf checks Koordinator's rule: label, else a quota named like the
// namespace in it, else one that lists the namespace, else the default.
func TestQuotaOf(t *testing.T) {
	ix := index()
	for _, tc := range []struct {
		name string
		pod  Pod
		want schedtypes.QuotaName
	}{
		{"label", Pod{Namespace: "team-b", QuotaLabel: "team-a"}, "team-a"},
		{"label of an unknown quota goes to the default", Pod{Namespace: "team-a", QuotaLabel: "nope"}, "koordinator-default-quota"},
		{"label of a system quota", Pod{Namespace: "x", QuotaLabel: "koordinator-system-quota"}, "koordinator-system-quota"},
		{"namespace", Pod{Namespace: "team-a"}, "team-a"},
		{"quota named like the namespace elsewhere", Pod{Namespace: "team-e"}, "koordinator-default-quota"},
		{"listed", Pod{Namespace: "team-c"}, "shared"},
		{"listed twice: first by name", Pod{Namespace: "team-d"}, "also-d"},
		{"nothing", Pod{Namespace: "elsewhere"}, "koordinator-default-quota"},
	} {
		if got := ix.QuotaOf(tc.pod); got != tc.want {
			t.Errorf("%s: QuotaOf = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestCharge checks which pods count as foreign usage, and where.
func TestCharge(t *testing.T) {
	ix := index()
	holding := map[schedtypes.UnitKey]bool{"team-a/admitted": true}
	holds := func(k schedtypes.UnitKey) bool { return holding[k] }
	running := func(mod func(*Pod)) Pod {
		p := Pod{Namespace: "team-a", Name: "p", QuotaLabel: "team-a", NodeName: "n1", Phase: corev1.PodRunning, Request: twoCPU}
		mod(&p)
		return p
	}
	for _, tc := range []struct {
		name string
		pod  Pod
		want schedtypes.QuotaName
	}{
		{"plain running pod", running(func(*Pod) {}), "team-a"},
		{"pending and bound", running(func(p *Pod) { p.Phase = corev1.PodPending }), "team-a"},
		{"not bound", running(func(p *Pod) { p.NodeName = "" }), ""},
		{"succeeded", running(func(p *Pod) { p.Phase = corev1.PodSucceeded }), ""},
		{"failed", running(func(p *Pod) { p.Phase = corev1.PodFailed }), ""},
		{"no requests", running(func(p *Pod) { p.Request = nil }), ""},
		{"pod of a unit holding quota", running(func(p *Pod) { p.UnitLabel = "admitted" }), ""},
		{"same unit name in another namespace", running(func(p *Pod) { p.UnitLabel = "admitted"; p.Namespace = "team-b" }), "team-a"},
		{"pod of a unit that holds nothing", running(func(p *Pod) { p.UnitLabel = "waiting" }), "team-a"},
		{"terminating pod of a unit", running(func(p *Pod) { p.UnitLabel = "waiting"; p.Terminating = true }), ""},
		{"terminating plain pod", running(func(p *Pod) { p.Terminating = true }), "team-a"},
		{"default quota", running(func(p *Pod) { p.QuotaLabel = ""; p.Namespace = "elsewhere" }), ""},
		{"root quota", running(func(p *Pod) { p.QuotaLabel = "koordinator-root-quota" }), ""},
	} {
		if got := ix.Charge(tc.pod, holds); got != tc.want {
			t.Errorf("%s: Charge = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestSlim checks that a slimmed pod classifies and weighs as the full one
// and carries nothing else.
func TestSlim(t *testing.T) {
	now := metav1.Now()
	full := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "team-a", UID: "u1", ResourceVersion: "7", DeletionTimestamp: &now,
			Labels:        map[string]string{"quota.scheduling.koordinator.sh/name": "team-a", "koord-queue/queue-unit": "u", "app": "x"},
			Annotations:   map[string]string{"big": "yes"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
		Spec: corev1.PodSpec{NodeName: "n1",
			InitContainers: []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}}},
			Containers: []corev1.Container{
				{Name: "a", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}}},
				{Name: "b", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}},
			}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady}}},
	}
	obj, err := Slim(full)
	if err != nil {
		t.Fatal(err)
	}
	slim := obj.(*corev1.Pod)
	a, b := FromPod(full), FromPod(slim)
	// An init container of 3 CPU outweighs the 1.5 CPU of the containers.
	want := schedtypes.Resources{corev1.ResourceCPU: 3000, corev1.ResourceMemory: 1 << 30}
	if !b.Request.Equal(want) || !a.Request.Equal(want) {
		t.Errorf("requests: full %v, slim %v, want %v", a.Request, b.Request, want)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("slim pod reads %+v, full %+v", b, a)
	}
	if len(slim.Labels) != 2 || slim.Annotations != nil || slim.ManagedFields != nil || len(slim.Status.Conditions) != 0 || len(slim.Spec.InitContainers) != 0 {
		t.Errorf("slim pod keeps more than it needs: %+v", slim)
	}
	if slim.UID != "u1" || slim.ResourceVersion != "7" {
		t.Errorf("slim pod lost its identity: %+v", slim.ObjectMeta)
	}
	if other, _ := Slim("not a pod"); other != "not a pod" {
		t.Errorf("Slim changed a non-pod: %v", other)
	}
}
