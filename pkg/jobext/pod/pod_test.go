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

package pod

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

func newPod(name, cpu string, labels, annotations map[string]string) *corev1.Pod {
	l := map[string]string{schedv1alpha1.QuotaNameLabel: "q"}
	for k, v := range labels {
		l[k] = v
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: l, Annotations: annotations},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
		}}}},
	}
}

func member(name, group, count, cpu string) *corev1.Pod {
	return newPod(name, cpu, map[string]string{GroupLabel: group}, map[string]string{GroupCountAnnotation: count})
}

func TestOpted(t *testing.T) {
	plain := newPod("a", "1", nil, nil)
	if !Opted(plain) || Wrap(plain).NeverManaged() {
		t.Error("a bare pod with the quota label is not queued")
	}
	noLabel := plain.DeepCopy()
	delete(noLabel.Labels, schedv1alpha1.QuotaNameLabel)
	owned := plain.DeepCopy()
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "u", Controller: ptr.To(true)}}
	system := plain.DeepCopy()
	system.Namespace = metav1.NamespaceSystem
	for name, p := range map[string]*corev1.Pod{"no quota label": noLabel, "controller owner": owned, "kube-system": system} {
		if Opted(p) || !Wrap(p).NeverManaged() {
			t.Errorf("%s: pod is queued", name)
		}
		if framework.AskedForQueue(Wrap(p)) {
			t.Errorf("%s: pod asked for the queue", name)
		}
	}
	// A non-controller owner does not make a pod someone else's.
	ref := plain.DeepCopy()
	ref.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "u"}}
	if !Opted(ref) {
		t.Error("a pod with a plain owner reference is not queued")
	}
}

func TestGateOnlyOurs(t *testing.T) {
	p := newPod("a", "1", nil, nil)
	p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "other.io/gate"}}
	w := Wrap(p)
	w.Suspend()
	w.Suspend()
	if len(p.Spec.SchedulingGates) != 2 || !w.IsSuspended() {
		t.Fatalf("gates after Suspend twice = %v", p.Spec.SchedulingGates)
	}
	w.Resume()
	if w.IsSuspended() || len(p.Spec.SchedulingGates) != 1 || p.Spec.SchedulingGates[0].Name != "other.io/gate" {
		t.Errorf("gates after Resume = %v, want only other.io/gate", p.Spec.SchedulingGates)
	}
}

func TestUnitNames(t *testing.T) {
	if got := UnitNameOf(newPod("a", "1", nil, nil)); got != "a-pod" {
		t.Errorf("single pod unit = %q", got)
	}
	if got := UnitNameOf(member("a", "g", "2", "1")); got != "g-podgroup" {
		t.Errorf("member unit = %q", got)
	}
	if got := UnitNameOf(newPod("", "1", nil, nil)); got != "" {
		t.Errorf("unnamed pod unit = %q", got)
	}
	// The webhook's labels name the group's unit on a member.
	m := member("a", "g", "2", "1")
	Wrap(m).SetPodLabels(framework.PodLabels("q", "a-pod"))
	if m.Labels[schedv1alpha1.QueueUnitLabel] != "g-podgroup" {
		t.Errorf("member labelled %v", m.Labels)
	}
}

func TestGroupShapes(t *testing.T) {
	g, err := newGroup([]*corev1.Pod{member("b", "g", "3", "2"), member("a", "g", "3", "1"), member("c", "g", "3", "1")})
	if err != nil {
		t.Fatal(err)
	}
	if !g.complete() || len(g.sets) != 2 {
		t.Fatalf("complete %v, sets %+v", g.complete(), g.sets)
	}
	// Sorted by name: a (1 cpu) opens "main", b (2 cpu) "shape-2".
	if g.sets[0].Name != "main" || g.sets[0].Count != 2 || g.sets[1].Name != "shape-2" || g.sets[1].Count != 1 {
		t.Errorf("sets = %s/%d %s/%d", g.sets[0].Name, g.sets[0].Count, g.sets[1].Name, g.sets[1].Count)
	}
	if g.setOf["b"] != "shape-2" || g.setOf["c"] != "main" {
		t.Errorf("setOf = %v", g.setOf)
	}
	total := framework.TotalRequests(g.sets)[corev1.ResourceCPU]
	if total.Cmp(resource.MustParse("4")) != 0 {
		t.Errorf("total cpu = %s, want 4", total.String())
	}
	part, err := newGroup([]*corev1.Pod{member("a", "g", "3", "1")})
	if err != nil || part.complete() || part.want != 3 {
		t.Errorf("1 of 3: complete %v want %d err %v", part.complete(), part.want, err)
	}
}

func TestGroupTooManyShapes(t *testing.T) {
	var pods []*corev1.Pod
	for i := 0; i <= schedv1alpha1.MaxPodSets; i++ {
		pods = append(pods, member(string(rune('a'+i)), "g", "9", strings.Repeat("1", i+1)+"m"))
	}
	if _, err := newGroup(pods); err == nil || !strings.Contains(err.Error(), "different shapes") {
		t.Errorf("%d shapes: err = %v", len(pods), err)
	}
}

func TestGroupBadInput(t *testing.T) {
	for name, tc := range map[string]struct {
		pods []*corev1.Pod
		want string
	}{
		"not a number": {[]*corev1.Pod{member("a", "g", "x", "1")}, `"x" is not a positive whole number`},
		"zero":         {[]*corev1.Pod{member("a", "g", "0", "1")}, `"0" is not a positive whole number`},
		"missing":      {[]*corev1.Pod{newPod("a", "1", map[string]string{GroupLabel: "g"}, nil)}, "has no annotation " + GroupCountAnnotation},
		"mismatch":     {[]*corev1.Pod{member("a", "g", "2", "1"), member("b", "g", "3", "1")}, "disagree on " + GroupCountAnnotation + ": 2 on a; 3 on b"},
		"too many":     {[]*corev1.Pod{member("a", "g", "1", "1"), member("b", "g", "1", "1")}, "group g has 2 pods, more than its"},
	} {
		if _, err := newGroup(tc.pods); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to say %q", name, err, tc.want)
		}
	}
}

func TestGroupStatus(t *testing.T) {
	a, b := member("a", "g", "2", "1"), member("b", "g", "2", "1")
	a.Status.Phase = corev1.PodRunning
	g, _ := newGroup([]*corev1.Pod{a, b})
	st := g.status()
	if st.Finished || st.Running() != 1 || st.Pending() != 1 {
		t.Errorf("one running, one ungated pending: %+v", st)
	}
	b.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: SchedulingGate}}
	if st := g.status(); st.Pending() != 0 {
		t.Errorf("a gated pod counts as pending: %+v", st)
	}
	a.Status.Phase, b.Status.Phase = corev1.PodSucceeded, corev1.PodFailed
	st = g.status()
	if !st.Finished || !st.Failed || !strings.Contains(st.Message, "b") {
		t.Errorf("one succeeded, one failed: %+v", st)
	}
}
