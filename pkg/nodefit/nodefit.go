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
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	schedcorev1 "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// PodSet is one group of identical pods: its name, its pod spec (for node
// selector, affinity and tolerations) and what one pod requests.
type PodSet struct {
	Name    string
	Spec    *corev1.PodSpec
	Request schedtypes.Resources
}

// Misfit says why the pods of a pod set fit no node.
type Misfit struct {
	PodSet string
	// NoEligibleNode is true when no schedulable node accepts the pod by its
	// taints, node selector and required affinity.
	NoEligibleNode bool
	// Resource, Largest and Requested describe the first resource (by name)
	// that no eligible node has enough of: the largest allocatable among them
	// and the pod's request. Empty Resource with NoEligibleNode false means
	// every resource fits some node, but no node has all of them at once.
	Resource  corev1.ResourceName
	Largest   int64
	Requested int64
}

// Message renders the misfit for a unit's status and events.
func (m *Misfit) Message() string {
	switch {
	case m.NoEligibleNode:
		return fmt.Sprintf("can never fit on any node: no schedulable node accepts the pods of pod set %s (taints, node selector or required node affinity)", m.PodSet)
	case m.Resource != "":
		return fmt.Sprintf("can never fit on any node: largest node has %s %s, a pod of pod set %s requests %s %s",
			schedtypes.Format(m.Resource, m.Largest), m.Resource, m.PodSet, schedtypes.Format(m.Resource, m.Requested), m.Resource)
	default:
		return fmt.Sprintf("can never fit on any node: no single node has every resource a pod of pod set %s requests", m.PodSet)
	}
}

// Reason is the misfit without its numbers.
func (m *Misfit) Reason() schedtypes.Reason {
	return schedtypes.Reason{Kind: schedtypes.WaitNoNodeFits, Subject: m.PodSet, Detail: string(m.Resource)}
}

// Check returns the first pod set whose pods fit no node, or nil when every
// pod set fits some node. With no schedulable node at all it returns nil: a
// cluster that adds nodes on demand (or a test without nodes) cannot be judged.
func Check(nodes []*corev1.Node, sets []PodSet) *Misfit {
	schedulable := make([]*corev1.Node, 0, len(nodes))
	for _, n := range nodes {
		if !n.Spec.Unschedulable {
			schedulable = append(schedulable, n)
		}
	}
	if len(schedulable) == 0 {
		return nil
	}
	for i := range sets {
		if m := checkSet(schedulable, &sets[i]); m != nil {
			return m
		}
	}
	return nil
}

func checkSet(nodes []*corev1.Node, ps *PodSet) *Misfit {
	var eligible []*corev1.Node
	pod := &corev1.Pod{}
	if ps.Spec != nil {
		pod.Spec = *ps.Spec
	}
	affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
	for _, n := range nodes {
		if accepts(n, pod, affinity) {
			eligible = append(eligible, n)
		}
	}
	if len(eligible) == 0 {
		return &Misfit{PodSet: ps.Name, NoEligibleNode: true}
	}
	for _, n := range eligible {
		if fits(n, ps.Request) {
			return nil
		}
	}
	names := make([]string, 0, len(ps.Request))
	for r := range ps.Request {
		names = append(names, string(r))
	}
	slices.Sort(names)
	for _, name := range names {
		r := corev1.ResourceName(name)
		want := ps.Request[r]
		largest := int64(0)
		for _, n := range eligible {
			largest = max(largest, allocatable(n, r))
		}
		if want > largest {
			return &Misfit{PodSet: ps.Name, Resource: r, Largest: largest, Requested: want}
		}
	}
	return &Misfit{PodSet: ps.Name}
}

// transientTaints mirror a node's passing conditions (not ready yet,
// unreachable, under pressure): they say nothing about whether a pod could
// ever run there, so the check ignores them.
var transientTaints = map[string]bool{
	corev1.TaintNodeNotReady: true, corev1.TaintNodeUnreachable: true, corev1.TaintNodeMemoryPressure: true,
	corev1.TaintNodeDiskPressure: true, corev1.TaintNodePIDPressure: true, corev1.TaintNodeNetworkUnavailable: true,
}

// accepts reports whether the node takes the pod by taints (NoSchedule and
// NoExecute, transient ones aside), node selector and required node affinity.
func accepts(n *corev1.Node, pod *corev1.Pod, affinity nodeaffinity.RequiredNodeAffinity) bool {
	_, untolerated := schedcorev1.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, pod.Spec.Tolerations, func(t *corev1.Taint) bool {
		return (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) && !transientTaints[t.Key]
	}, true)
	if untolerated {
		return false
	}
	ok, err := affinity.Match(n)
	return ok && err == nil
}

func fits(n *corev1.Node, req schedtypes.Resources) bool {
	for r, v := range req {
		if v > 0 && v > allocatable(n, r) {
			return false
		}
	}
	return true
}

// allocatable is the node's allocatable amount of r in the units quota
// uses (milli for cpu, whole units otherwise).
func allocatable(n *corev1.Node, r corev1.ResourceName) int64 {
	q, ok := n.Status.Allocatable[r]
	if !ok {
		return 0
	}
	return schedtypes.FromList(corev1.ResourceList{r: q})[r]
}

// Relevant reports whether a node change can change an answer of Check:
// schedulability, taints, labels or allocatable. Heartbeats and conditions
// cannot.
func Relevant(old, cur *corev1.Node) bool {
	if old == nil || cur == nil {
		return true
	}
	if old.Spec.Unschedulable != cur.Spec.Unschedulable || !equalTaints(old.Spec.Taints, cur.Spec.Taints) ||
		!equalMap(old.Labels, cur.Labels) || len(old.Status.Allocatable) != len(cur.Status.Allocatable) {
		return true
	}
	for r, q := range cur.Status.Allocatable {
		if o, ok := old.Status.Allocatable[r]; !ok || o.Cmp(q) != 0 {
			return true
		}
	}
	return false
}

func equalTaints(a, b []corev1.Taint) bool {
	return slices.EqualFunc(a, b, func(x, y corev1.Taint) bool {
		return x.Key == y.Key && x.Value == y.Value && x.Effect == y.Effect
	})
}

func equalMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Strip keeps of a node only what Check and Relevant read, so a cache of
// nodes stays small (no images, conditions or managed fields).
func Strip(n *corev1.Node) *corev1.Node {
	out := &corev1.Node{}
	out.Name, out.Labels, out.ResourceVersion = n.Name, n.Labels, n.ResourceVersion
	out.Spec.Unschedulable, out.Spec.Taints = n.Spec.Unschedulable, n.Spec.Taints
	out.Status.Allocatable = n.Status.Allocatable
	return out
}
