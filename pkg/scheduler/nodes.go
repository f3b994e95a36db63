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
	"sync"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/nodefit"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
)

// nodes owns what the scheduler knows of the cluster's nodes, for the node
// fit check (pkg/nodefit): a snapshot rebuilt on every change that can alter
// an answer, and a version that counts those changes. It has its own lock,
// taken after the cache's when both are held. A nil *nodes checks nothing
// (--node-fit-check=false).
type nodes struct {
	// changed says a node appeared, grew or went (framework.Handle.Invalidate).
	changed func()

	mu       sync.Mutex
	byName   map[string]*corev1.Node
	snapshot []*corev1.Node
	version  uint64
}

// nodeFit is a unit's last answer, valid while the node version and the
// unit's generation are the same.
type nodeFit struct {
	version    uint64
	generation int64
	misfit     *nodefit.Misfit
}

func newNodes(changed func()) *nodes {
	return &nodes{changed: changed, byName: map[string]*corev1.Node{}}
}

// handlers are the node informer's event handlers.
func (ns *nodes) handlers() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { ns.onNode(nil, obj) },
		UpdateFunc: func(old, obj any) { ns.onNode(old, obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if n, ok := obj.(*corev1.Node); ok && ns.set(n.Name, nil) {
				ns.changed()
			}
		},
	}
}

func (ns *nodes) onNode(old, obj any) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return
	}
	prev, _ := old.(*corev1.Node)
	if prev != nil && !nodefit.Relevant(prev, n) {
		return
	}
	if ns.set(n.Name, nodefit.Strip(n)) {
		// A new or bigger node can make a unit that never fitted fit.
		ns.changed()
	}
}

// set records node name (nil: gone) and reports whether anything changed.
func (ns *nodes) set(name string, n *corev1.Node) bool {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	_, had := ns.byName[name]
	if n == nil {
		if !had {
			return false
		}
		delete(ns.byName, name)
	} else {
		ns.byName[name] = n
	}
	ns.snapshot = make([]*corev1.Node, 0, len(ns.byName))
	for _, x := range ns.byName {
		ns.snapshot = append(ns.snapshot, x)
	}
	ns.version++
	return true
}

func (ns *nodes) current() ([]*corev1.Node, uint64) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return ns.snapshot, ns.version
}

// misfit refuses a unit whose pods fit no node, for good: it is tried
// again only when the nodes or the unit change. It runs under the cache's
// lock (st.fit).
func (ns *nodes) misfit(st *unitState) *schedtypes.Failure {
	if ns == nil {
		return nil
	}
	list, version := ns.current()
	if st.fit == nil || st.fit.version != version || st.fit.generation != st.obj.Generation {
		st.fit = &nodeFit{version: version, generation: st.obj.Generation, misfit: nodefit.Check(list, podSetsOf(st.obj))}
	}
	if m := st.fit.misfit; m != nil {
		return &schedtypes.Failure{Reason: m.Reason(), Message: m.Message(), NeverFits: true}
	}
	return nil
}

// podSetsOf is what the node fit check needs of a unit's pod sets. A unit
// described only by spec.resource has no pods to place and is not checked.
func podSetsOf(u *schedv1alpha1.QueueUnit) []nodefit.PodSet {
	out := make([]nodefit.PodSet, 0, len(u.Spec.PodSet))
	for i := range u.Spec.PodSet {
		ps := &u.Spec.PodSet[i]
		out = append(out, nodefit.PodSet{Name: ps.Name, Spec: &ps.Template.Spec, Request: schedtypes.FromList(resources.PodRequests(&ps.Template.Spec))})
	}
	return out
}
