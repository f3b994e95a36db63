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

package nodefit

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

func node(name, cpu, mem string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
	n := &corev1.Node{}
	n.Name, n.Labels = name, labels
	n.Spec.Taints = taints
	n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	return n
}

func set(name, cpu, mem string, spec *corev1.PodSpec) PodSet {
	return PodSet{Name: name, Spec: spec, Request: schedtypes.FromList(corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)})}
}

var gpuTaint = corev1.Taint{Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}

func TestCheck(t *testing.T) {
	small := node("small", "8", "32Gi", map[string]string{"pool": "cpu"})
	big := node("big", "32", "256Gi", map[string]string{"pool": "cpu"})
	tainted := node("gpu", "64", "512Gi", map[string]string{"pool": "gpu"}, gpuTaint)
	// A node that is not ready yet carries a taint that says nothing about fit.
	starting := node("starting", "48", "64Gi", nil, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
	cordoned := node("cordoned", "128", "1Ti", nil)
	cordoned.Spec.Unschedulable = true
	nodes := []*corev1.Node{small, big, tainted, cordoned}
	tolerates := &corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}}}
	selectsGPU := &corev1.PodSpec{NodeSelector: map[string]string{"pool": "gpu"}}
	cases := []struct {
		name    string
		nodes   []*corev1.Node
		sets    []PodSet
		want    *Misfit
		message string
	}{
		{name: "fits the big node", nodes: nodes, sets: []PodSet{set("worker", "32", "100Gi", nil)}},
		{name: "a node not ready yet counts", nodes: []*corev1.Node{small, starting}, sets: []PodSet{set("worker", "48", "1Gi", nil)}},
		// The tainted and the cordoned nodes are bigger, but the pod may not run there.
		{name: "larger than every node it may use", nodes: nodes, sets: []PodSet{set("head", "1", "1Gi", nil), set("worker", "64", "1Gi", nil)},
			want:    &Misfit{PodSet: "worker", Resource: corev1.ResourceCPU, Largest: 32000, Requested: 64000},
			message: "can never fit on any node: largest node has 32 cpu, a pod of pod set worker requests 64 cpu"},
		{name: "a toleration opens the tainted node", nodes: nodes, sets: []PodSet{set("worker", "64", "1Gi", tolerates)}},
		{name: "node selector with no matching untainted node", nodes: nodes, sets: []PodSet{set("worker", "1", "1Gi", selectsGPU)},
			want:    &Misfit{PodSet: "worker", NoEligibleNode: true},
			message: "can never fit on any node: no schedulable node accepts the pods of pod set worker (taints, node selector or required node affinity)"},
		{name: "each resource fits some node, never all at once",
			nodes: []*corev1.Node{node("cpu-heavy", "64", "8Gi", nil), node("mem-heavy", "8", "512Gi", nil)},
			sets:  []PodSet{set("worker", "32", "256Gi", nil)},
			want:  &Misfit{PodSet: "worker"}},
		{name: "an extended resource no node has", nodes: nodes,
			sets: []PodSet{{Name: "worker", Request: schedtypes.Resources{"nvidia.com/gpu": 1}}},
			want: &Misfit{PodSet: "worker", Resource: "nvidia.com/gpu", Largest: 0, Requested: 1}},
		{name: "no schedulable node: not judged", nodes: []*corev1.Node{cordoned}, sets: []PodSet{set("worker", "1000", "1Gi", nil)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Check(tc.nodes, tc.sets)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
			if tc.message != "" && got.Message() != tc.message {
				t.Errorf("message %q, want %q", got.Message(), tc.message)
			}
		})
	}
}

func TestRelevant(t *testing.T) {
	a := node("n", "8", "32Gi", map[string]string{"x": "1"})
	heartbeat := a.DeepCopy()
	heartbeat.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	heartbeat.ResourceVersion = "2"
	if Relevant(a, heartbeat) {
		t.Error("a heartbeat counted as relevant")
	}
	grown := a.DeepCopy()
	grown.Status.Allocatable[corev1.ResourceCPU] = resource.MustParse("16")
	tainted := a.DeepCopy()
	tainted.Spec.Taints = []corev1.Taint{gpuTaint}
	relabelled := a.DeepCopy()
	relabelled.Labels = map[string]string{"x": "2"}
	cordoned := a.DeepCopy()
	cordoned.Spec.Unschedulable = true
	for name, n := range map[string]*corev1.Node{"allocatable": grown, "taints": tainted, "labels": relabelled, "unschedulable": cordoned} {
		if !Relevant(a, n) {
			t.Errorf("%s change not relevant", name)
		}
	}
	if s := Strip(heartbeat); len(s.Status.Conditions) != 0 || s.Status.Allocatable.Cpu().Cmp(resource.MustParse("8")) != 0 || s.Labels["x"] != "1" {
		t.Errorf("Strip kept %+v", s)
	}
}
