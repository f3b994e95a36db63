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

package elasticquota

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

func (s *follower) onQuota(obj any) {
	eq, ok := obj.(*eqv1alpha1.ElasticQuota)
	if !ok {
		return
	}
	s.p.mu.Lock()
	old := s.p.quotas[schedtypes.QuotaName(eq.Name)]
	// Quota names are cluster-wide: of two of one name, the oldest counts.
	eq = s.p.sameName.Add(eq)
	s.p.quotas[schedtypes.QuotaName(eq.Name)] = eq
	changed := old == nil || !equalSpec(old, eq) || old.Namespace != eq.Namespace
	var recheck []schedtypes.QuotaName
	var freed []schedtypes.CohortName
	if changed {
		// Koordinator's own quotas are not in the tree: units are never
		// charged to them (quota.Tree.Problem), and the root's max is the
		// cluster, which the node fit check bounds.
		if !quota.IsSystem(schedtypes.QuotaName(eq.Name)) {
			// A cycle is refused by the tree and reported by report.
			_ = s.p.tree.Upsert(specOf(eq))
		}
		recheck = s.treeChangedLocked()
		// Which quota a pod is charged to depends on the quotas' names,
		// namespaces and namespaces annotations only.
		if old == nil || old.Namespace != eq.Namespace ||
			old.Annotations[eqv1alpha1.NamespacesAnnotation] != eq.Annotations[eqv1alpha1.NamespacesAnnotation] {
			s.p.reindexLocked()
		}
		freed = s.p.flushForeignLocked()
	}
	notes := s.p.takeNotesLocked()
	s.p.mu.Unlock()
	s.p.tellHoldings(notes)
	s.p.tellFreed(freed)
	if changed {
		// A new or changed quota can let anything through.
		s.p.h.Invalidate()
	}
	s.queue.Add(eq.Name)
	for _, name := range recheck {
		s.queue.Add(string(name))
	}
	if changed {
		// The parents' children's min may have changed (reportChildrenMin).
		s.syncParents(old, eq)
	}
}

// syncParents queues the parents of a quota's old and new versions.
func (s *follower) syncParents(quotas ...*eqv1alpha1.ElasticQuota) {
	for _, q := range quotas {
		if q != nil && q.Labels[eqv1alpha1.ParentLabel] != "" {
			s.queue.Add(q.Labels[eqv1alpha1.ParentLabel])
		}
	}
}

// treeChangedLocked lists the quotas whose tree problem may have appeared or
// gone with a change of the tree, for report to say.
func (s *follower) treeChangedLocked() []schedtypes.QuotaName {
	var out []schedtypes.QuotaName
	for name := range s.p.quotas {
		if _, reported := s.p.treeReported[name]; reported || s.p.tree.Problem(name) != nil {
			out = append(out, name)
		}
	}
	return out
}

// sharedWeight reads Koordinator's shared-weight annotation, a JSON resource
// list such as {"cpu":"10"}; nil (the quota's max) when absent or malformed.
func sharedWeight(eq *eqv1alpha1.ElasticQuota) (schedtypes.Resources, error) {
	v, ok := eq.Annotations[eqv1alpha1.SharedWeightAnnotation]
	if !ok || strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var list corev1.ResourceList
	if err := json.Unmarshal([]byte(v), &list); err != nil {
		return nil, fmt.Errorf("annotation %s=%q on ElasticQuota %s/%s is not a resource list such as {\"cpu\":\"10\"}: %w; its max is its weight",
			eqv1alpha1.SharedWeightAnnotation, v, eq.Namespace, eq.Name, err)
	}
	for r, q := range list {
		if q.Sign() < 0 {
			return nil, fmt.Errorf("annotation %s on ElasticQuota %s/%s gives %s a negative weight; its max is its weight",
				eqv1alpha1.SharedWeightAnnotation, eq.Namespace, eq.Name, r)
		}
	}
	return schedtypes.FromList(list), nil
}

// specOf is what the tree keeps of a quota. A shared-weight equal to the
// max (what Koordinator's webhook writes on every quota) asks no weighted
// sharing: the tree treats it as no weight (quota.Spec.Weight).
func specOf(eq *eqv1alpha1.ElasticQuota) quota.Spec {
	weight, _ := sharedWeight(eq)
	return quota.Spec{
		Name: schedtypes.QuotaName(eq.Name), Parent: schedtypes.QuotaName(eq.Labels[eqv1alpha1.ParentLabel]),
		IsParent: eq.Labels[eqv1alpha1.IsParentLabel] == "true",
		Min:      schedtypes.FromList(eq.Spec.Min), Max: schedtypes.FromList(eq.Spec.Max),
		NoLend: eq.Labels[eqv1alpha1.AllowLentResourceLabel] == "false", Weight: weight,
	}
}

func equalSpec(a, b *eqv1alpha1.ElasticQuota) bool {
	return a.Labels[eqv1alpha1.ParentLabel] == b.Labels[eqv1alpha1.ParentLabel] &&
		a.Labels[eqv1alpha1.IsParentLabel] == b.Labels[eqv1alpha1.IsParentLabel] &&
		a.Labels[eqv1alpha1.AllowLentResourceLabel] == b.Labels[eqv1alpha1.AllowLentResourceLabel] &&
		a.Annotations[eqv1alpha1.SharedWeightAnnotation] == b.Annotations[eqv1alpha1.SharedWeightAnnotation] &&
		a.Annotations[eqv1alpha1.NamespacesAnnotation] == b.Annotations[eqv1alpha1.NamespacesAnnotation] &&
		schedtypes.FromList(a.Spec.Min).Equal(schedtypes.FromList(b.Spec.Min)) &&
		schedtypes.FromList(a.Spec.Max).Equal(schedtypes.FromList(b.Spec.Max))
}

func (s *follower) onQuotaDelete(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	eq, ok := obj.(*eqv1alpha1.ElasticQuota)
	if !ok {
		return
	}
	s.p.mu.Lock()
	var recheck []schedtypes.QuotaName
	next := s.p.sameName.Remove(eq)
	delete(s.p.sameNameReported, eq.Namespace+"/"+eq.Name)
	if cur, ok := s.p.quotas[schedtypes.QuotaName(eq.Name)]; ok && cur.Namespace == eq.Namespace && next != nil {
		// Another quota of the name counts now.
		s.p.mu.Unlock()
		s.onQuota(next)
		s.syncParents(eq)
		return
	}
	if cur, ok := s.p.quotas[schedtypes.QuotaName(eq.Name)]; ok && cur.Namespace == eq.Namespace {
		delete(s.p.quotas, schedtypes.QuotaName(eq.Name))
		delete(s.p.treeReported, schedtypes.QuotaName(eq.Name))
		delete(s.p.minReported, schedtypes.QuotaName(eq.Name))
		if !quota.IsSystem(schedtypes.QuotaName(eq.Name)) {
			s.p.tree.Delete(schedtypes.QuotaName(eq.Name))
		}
		recheck = s.treeChangedLocked()
		s.p.reindexLocked()
		_ = s.p.flushForeignLocked() // Invalidate below tries everyone
	}
	notes := s.p.takeNotesLocked()
	s.p.mu.Unlock()
	s.p.tellHoldings(notes)
	s.p.h.Invalidate()
	s.queue.Add(eq.Name)
	for _, name := range recheck {
		s.queue.Add(string(name))
	}
	s.syncParents(eq)
}

// Start runs the worker that says what is wrong with the ElasticQuotas.
func (p *Plugin) Start(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		p.follow.queue.ShutDown()
	}()
	for p.follow.processNext(ctx) {
	}
	return nil
}

func (s *follower) processNext(ctx context.Context) bool {
	name, shutdown := s.queue.Get()
	if shutdown {
		return false
	}
	defer s.queue.Done(name)
	s.report(name)
	return true
}

// report records a Warning event on the ElasticQuota of name for each
// thing the plugin cannot read as asked: its place in the tree, its
// children's min, a second quota of its name, its shared weight, its
// namespaces. Koordinator's own quotas are not reported on.
func (s *follower) report(name string) {
	s.p.mu.Lock()
	eq := s.p.quotas[schedtypes.QuotaName(name)]
	s.p.mu.Unlock()
	if eq == nil || quota.IsSystem(schedtypes.QuotaName(name)) {
		return
	}
	s.reportTree(eq)
	s.reportChildrenMin(eq)
	s.reportSameName(eq)
	if _, err := sharedWeight(eq); err != nil {
		s.p.h.Recorder().Eventf(eq, corev1.EventTypeWarning, "InvalidSharedWeight", "%v", err)
	}
	if _, err := namespacesOf(eq); err != nil {
		s.p.h.Recorder().Eventf(eq, corev1.EventTypeWarning, "InvalidNamespaces", "%v", err)
	}
}

// reportTree records a Warning event InvalidQuotaTree on a quota whose place
// in the tree is broken (missing parent, cycle), once per problem.
func (s *follower) reportTree(eq *eqv1alpha1.ElasticQuota) {
	s.p.mu.Lock()
	msg := ""
	if s := s.p.tree.Problem(schedtypes.QuotaName(eq.Name)); s != nil && s.Broken != "" {
		msg = s.Broken
	}
	report := msg != "" && s.p.treeReported[schedtypes.QuotaName(eq.Name)] != msg
	if msg == "" {
		delete(s.p.treeReported, schedtypes.QuotaName(eq.Name))
	} else {
		s.p.treeReported[schedtypes.QuotaName(eq.Name)] = msg
	}
	s.p.mu.Unlock()
	if report {
		s.p.h.Recorder().Eventf(eq, corev1.EventTypeWarning, "InvalidQuotaTree",
			"%s (label %s): units of this quota and of the quotas below it wait until it is fixed", msg, eqv1alpha1.ParentLabel)
	}
}

// reportChildrenMin records a Warning event InvalidQuotaMin on a quota whose
// children's min sum above its own min for some resource, once per problem.
// Koordinator's webhook refuses such a tree; here the parent's max still
// bounds its children, but their guarantees cannot all be kept.
func (s *follower) reportChildrenMin(eq *eqv1alpha1.ElasticQuota) {
	s.p.mu.Lock()
	sum := corev1.ResourceList{}
	var children []string
	for _, c := range s.p.quotas {
		if c.Name == eq.Name || c.Labels[eqv1alpha1.ParentLabel] != eq.Name {
			continue
		}
		children = append(children, c.Name)
		for r, q := range c.Spec.Min {
			s := sum[r]
			s.Add(q)
			sum[r] = s
		}
	}
	var over []string
	for _, r := range slices.Sorted(maps.Keys(sum)) {
		own := eq.Spec.Min[r]
		if s := sum[r]; s.Cmp(own) > 0 {
			over = append(over, fmt.Sprintf("%s %s above %s", r, s.String(), own.String()))
		}
	}
	msg := ""
	if len(over) > 0 {
		slices.Sort(children)
		msg = fmt.Sprintf("the min of the children of quota %s (%s) sums above its own min: %s; their guarantees cannot all be kept",
			eq.Name, strings.Join(children, ", "), strings.Join(over, ", "))
	}
	report := msg != "" && s.p.minReported[schedtypes.QuotaName(eq.Name)] != msg
	if msg == "" {
		delete(s.p.minReported, schedtypes.QuotaName(eq.Name))
	} else {
		s.p.minReported[schedtypes.QuotaName(eq.Name)] = msg
	}
	s.p.mu.Unlock()
	if report {
		s.p.h.Recorder().Eventf(eq, corev1.EventTypeWarning, "InvalidQuotaMin", "%s", msg)
	}
}
