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

package scheduler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

func node(name, cpu string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}
}

// With the node fit check, a unit whose pods fit no node waits with
// NoNodeFits, whatever its quota allows; a node big enough makes it fit.
func TestNodeFitRefusesUntilANodeFits(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.NodeFitCheck = true })
	f.plugin.setCapacity("team-a", 10)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	h := f.s.nodes.handlers()
	h.OnAdd(node("small", "2"), false)
	f.addUnit(t, utiltesting.MakeQueueUnit("a", "ns").Quota("team-a").PodSet("worker", 1, "cpu", "4").Obj())
	f.pass(t)
	f.step(t, waitingWriteDelay, f.informDue)
	wantWaiting(t, f.get(t, "a"), "NoNodeFits", "can never fit on any node: largest node has 2 cpu, a pod of pod set worker requests 4 cpu")
	if r, _, _ := f.plugin.counts(); r != 0 {
		t.Fatal("a unit that fits no node was reserved")
	}

	// A heartbeat changes nothing an answer depends on.
	small := node("small", "2")
	beat := small.DeepCopy()
	beat.Annotations = map[string]string{"heartbeat": "1"}
	_, before := f.s.nodes.current()
	h.OnUpdate(small, beat)
	if _, after := f.s.nodes.current(); after != before {
		t.Fatal("a heartbeat changed the nodes' version")
	}

	h.OnAdd(node("big", "8"), false)
	f.pass(t)
	if got := f.get(t, "a").Status.Phase; got != schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatalf("phase = %s, want admitted once a node fits its pods", got)
	}
	want := "Normal Scheduled Admitted by queue team-a; quota team-a charged cpu=4"
	events := eventsWith(f.takeEvents(), "Scheduled")
	if len(events) != 1 || events[0] != want {
		t.Fatalf("events = %v, want %q without the skipped-check note", events, want)
	}
}

// Nodes that go away, by delete or tombstone, leave the snapshot; removing
// an unknown node changes nothing.
func TestNodesForgetDeletedNodes(t *testing.T) {
	var changes int
	ns := newNodes(func() { changes++ })
	h := ns.handlers()
	h.OnAdd(node("a", "2"), false)
	h.OnAdd(node("b", "4"), false)
	h.OnDelete(node("a", "2"))
	h.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "b", Obj: node("b", "4")})
	h.OnDelete(node("never", "1"))
	list, version := ns.current()
	if len(list) != 0 || version != 4 || changes != 4 {
		t.Fatalf("nodes = %d, version %d, changes %d; want none left after 4 changes", len(list), version, changes)
	}
}

// A unit described only by spec.resource has no pods to place: it is not
// checked.
func TestNodeFitSkipsUnitsWithoutPodSets(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.NodeFitCheck = true })
	f.plugin.setCapacity("team-a", 10)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	f.s.nodes.handlers().OnAdd(node("small", "1"), false)
	f.addUnit(t, makeUnit("a", "team-a", "4").Obj())
	f.pass(t)
	if got := f.get(t, "a").Status.Phase; got != schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatalf("phase = %s, want admitted: it has no pods to place", got)
	}
}
