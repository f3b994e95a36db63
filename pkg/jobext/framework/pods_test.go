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

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// ownedPod is a pod whose controller is the fake job "j" (a ConfigMap).
func ownedPod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: labels,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "j", UID: "uid-1", Controller: ptr.To(true)}}}}
}

// Pods reach the job by their controller and by their unit label (a pod of
// a RayJob's cluster, a Spark executor), each job once.
func TestPodToJob(t *testing.T) {
	job := newFakeJob("j", nil, nil, onePodSet())
	other := admittedUnit(job, time.Now())
	other.Name = "of-another-kind"
	other.Spec.ConsumerRef = &corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Name: "x", Namespace: "ns"}
	c := fakeClient(job.cm, admittedUnit(job, time.Now()), other)
	r := NewReconciler(c, fakeExtension(onePodSet(), JobStatus{}), &eventLog{}, nil, ReconcilerOptions{})
	toJ := []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "j"}}}
	unitLabel := func(unit string) map[string]string { return map[string]string{schedv1alpha1.QueueUnitLabel: unit} }
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want []reconcile.Request
	}{
		{"controlled by the job", ownedPod("p", nil), toJ},
		{"labelled with its unit", unitPod("p", corev1.PodPending), toJ},
		{"both, once", ownedPod("p", unitLabel("j-fake")), toJ},
		{"a unit of another kind", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: unitLabel("of-another-kind")}}, nil},
		{"a unit that does not exist", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: unitLabel("gone")}}, nil},
		{"neither", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}, nil},
	} {
		if diff := cmp.Diff(tc.want, r.podToJob(context.Background(), tc.pod)); diff != "" {
			t.Errorf("%s: requests (-want +got):\n%s", tc.name, diff)
		}
	}
}

// Only the pod events a reconcile acts on pass.
func TestPodEvents(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pending := unitPod("p", corev1.PodPending)
	refused := unitPod("p", corev1.PodPending, unschedulable(koordQuota, at))
	refusedAgain := unitPod("p", corev1.PodPending, unschedulable(koordParentQuota, at.Add(time.Minute)))
	noRoom := unitPod("p", corev1.PodPending, unschedulable(noCPU, at))
	scheduled := unitPod("p", corev1.PodPending, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue})
	running := unitPod("p", corev1.PodRunning, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue})
	runningLabelled := running.DeepCopy()
	runningLabelled.Labels["other"] = "x"
	disrupted := running.DeepCopy()
	disrupted.Status.Conditions = append(disrupted.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue})
	p := podEvents()
	for _, tc := range []struct {
		name     string
		old, new *corev1.Pod // old nil: a creation
		want     bool
	}{
		{"created new", nil, pending, false},
		{"created refused (the cache filling)", nil, refused, true},
		{"created evicted", nil, disrupted, true},
		{"refused for quota", pending, refused, true},
		{"refused for another reason", pending, noRoom, true},
		{"refused for quota after another reason", noRoom, refused, true},
		{"refused again, with another message", refused, refusedAgain, false},
		{"scheduled", refused, scheduled, true},
		{"runs", scheduled, running, true},
		{"a label changes", running, runningLabelled, false},
		{"disrupted", running, disrupted, true},
		{"orphaned", ownedPod("p", nil), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}, true},
	} {
		var got bool
		if tc.old == nil {
			got = p.Create(event.CreateEvent{Object: tc.new})
		} else {
			got = p.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new})
		}
		if got != tc.want {
			t.Errorf("%s: passed %v, want %v", tc.name, got, tc.want)
		}
	}
	if !p.Delete(event.DeleteEvent{Object: pending}) {
		t.Error("a deletion did not pass: a deleted unit waits for its job's pods")
	}
}

// A deleted unit counts its job's pods by their controller, not by label.
func TestPodsLeft(t *testing.T) {
	job := newFakeJob("j", nil, nil, onePodSet())
	c := fakeClient(job.cm, ownedPod("a", nil), ownedPod("b", nil), unitPod("c", corev1.PodPending))
	r := NewReconciler(c, fakeExtension(onePodSet(), JobStatus{}), &eventLog{}, nil, ReconcilerOptions{})
	n, err := r.podsLeft(context.Background(), "ns", "uid-1")
	if err != nil || n != 2 {
		t.Errorf("podsLeft = %d, %v; want 2", n, err)
	}
}

// TestTrimPodKeepsQueuedBarePods: the cache keeps whole a pod with the quota
// label and no controller (extension pod reads its spec), and trims every
// other pod, a Job's labelled one too.
func TestTrimPodKeepsQueuedBarePods(t *testing.T) {
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}
	quota := map[string]string{schedv1alpha1.QuotaNameLabel: "q"}
	bare := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: "ns", Labels: quota}, Spec: spec}
	owned := ownedPod("owned", quota)
	owned.Spec = spec
	unlabelled := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "ns"}, Spec: spec}
	for _, tc := range []struct {
		pod  *corev1.Pod
		keep bool
	}{{bare, true}, {owned, false}, {unlabelled, false}} {
		out, err := TrimPod(tc.pod)
		if err != nil {
			t.Fatal(err)
		}
		if kept := len(out.(*corev1.Pod).Spec.Containers) > 0; kept != tc.keep {
			t.Errorf("pod %s: spec kept %v, want %v", tc.pod.Name, kept, tc.keep)
		}
	}
	// A trimmed pod keeps its scheduling gates: a LeaderWorkerSet's pods
	// have a controller and are held by the queue's gate.
	owned.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "other.io/gate"}, {Name: SchedulingGate}}
	out, err := TrimPod(owned)
	if err != nil {
		t.Fatal(err)
	}
	if p := out.(*corev1.Pod); !Gated(p) || len(p.Spec.SchedulingGates) != 2 {
		t.Errorf("trimmed pod's gates %v, want both kept", p.Spec.SchedulingGates)
	}
}
