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

package quota

import (
	"fmt"
	"slices"
	"strings"

	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// RootName is the implicit root of the tree. It has no limits of its own:
// koord-scheduler creates koordinator-root-quota with an empty spec (the
// cluster's capacity appears only in its runtime annotation), and the node
// fit check, not the tree, bounds units by the cluster.
const RootName schedtypes.QuotaName = eqv1alpha1.RootQuotaName

// SystemName and DefaultName are Koordinator's other own quotas. Units are
// never admitted to any of the three (see IsSystem).
const (
	SystemName  schedtypes.QuotaName = eqv1alpha1.SystemQuotaName
	DefaultName schedtypes.QuotaName = eqv1alpha1.DefaultQuotaName
)

// IsSystem reports whether name is one of Koordinator's own quotas.
func IsSystem(name schedtypes.QuotaName) bool { return eqv1alpha1.IsSystemQuota(string(name)) }

// Spec is what an ElasticQuota says about itself.
type Spec struct {
	Name schedtypes.QuotaName
	// Parent is the parent quota's name; empty means the root.
	Parent schedtypes.QuotaName
	Min    schedtypes.Resources
	Max    schedtypes.Resources
	// IsParent marks a quota as a parent (Koordinator's is-parent: "true")
	// even while no child names it: no unit is admitted to it.
	IsParent bool
	// NoLend keeps the quota's unused min from others (Koordinator's
	// allow-lent-resource: "false"): its own units get it at once, without
	// reclaim.
	NoLend bool
	// Weight is the quota's share of what its parent has above the mins of
	// its children (Koordinator's shared-weight); nil means its Max. A
	// weight equal to Max (what Koordinator's webhook writes on every quota)
	// is no request for fair sharing.
	Weight schedtypes.Resources
}

// weighted reports whether s asks for fair sharing: a weight that is not
// its max.
func (s *Spec) weighted() bool { return len(s.Weight) > 0 && !s.Weight.Equal(s.Max) }

type node struct {
	spec Spec
	// exists is false for a placeholder: a quota named as a parent, or one that
	// was deleted while units still used it. A placeholder has no limits.
	exists bool
	// refused is true when the quota's parent link would make a cycle: it
	// hangs under the root until the link is fixed.
	refused  bool
	parent   *node
	children map[schedtypes.QuotaName]*node
	// used is what units charged to this quota and its descendants use,
	// foreign usage included.
	used schedtypes.Resources
	// foreign is the part of used that is not our units' (see SetForeign),
	// of this quota and its descendants; ownForeign is this quota's own.
	foreign, ownForeign schedtypes.Resources
}

// Tree is the quota tree with its usage.
type Tree struct {
	root     *node
	nodes    map[schedtypes.QuotaName]*node
	oversell float64
	// noLend counts the quotas that do not lend their min; while it is 0,
	// nothing is reserved and checks skip the reservations altogether.
	noLend int
	// weighted counts the quotas with a shared weight other than their max;
	// while it is 0, nobody asked for fair sharing.
	weighted int
	// version counts changes of usage and shape; reserves memoizes what each
	// node reserves for its non-lending quotas, valid at reservesAt.
	version    uint64
	reserves   map[*node]schedtypes.Resources
	reservesAt uint64
	// shape counts changes of the tree's shape alone (see ShapeVersion).
	shape uint64
}

// New returns an empty tree. oversell multiplies every max (1 means none).
func New(oversell float64) *Tree {
	if oversell <= 0 {
		oversell = 1
	}
	root := &node{spec: Spec{Name: RootName}, exists: true, children: map[schedtypes.QuotaName]*node{}}
	return &Tree{root: root, nodes: map[schedtypes.QuotaName]*node{RootName: root}, oversell: oversell}
}

// Oversell returns the factor applied to every max.
func (t *Tree) Oversell() float64 { return t.oversell }

func (t *Tree) getOrPlaceholder(name schedtypes.QuotaName) *node {
	if n, ok := t.nodes[name]; ok {
		return n
	}
	n := &node{spec: Spec{Name: name}, children: map[schedtypes.QuotaName]*node{}, parent: t.root}
	t.root.children[name] = n
	t.nodes[name] = n
	return n
}

// Upsert adds or changes a quota. A parent that does not exist yet is kept as a
// placeholder until it arrives. A parent link that would make a cycle is
// refused: the quota hangs under the root and the error says why.
func (t *Tree) Upsert(s Spec) error {
	if s.Name == "" || s.Name == RootName {
		return fmt.Errorf("quota name %q is reserved or empty", s.Name)
	}
	n := t.getOrPlaceholder(s.Name)
	if n.exists && n.spec.NoLend {
		t.noLend--
	}
	if n.exists && n.spec.weighted() {
		t.weighted--
	}
	if s.weighted() {
		t.weighted++
	}
	n.spec = Spec{Name: s.Name, Parent: s.Parent, IsParent: s.IsParent, Min: s.Min.Clone(), Max: s.Max.Clone(), NoLend: s.NoLend, Weight: s.Weight.Clone()}
	n.exists = true
	if s.NoLend {
		t.noLend++
	}
	t.version++
	t.shape++
	err := t.link(n)
	// A change can end another quota's cycle.
	for _, other := range t.refusedNodes() {
		if other != n {
			_ = t.link(other)
		}
	}
	return err
}

// link hangs n under the parent its spec names, or under the root, marked
// refused, when that would make a cycle.
func (t *Tree) link(n *node) error {
	parentName := n.spec.Parent
	if parentName == "" {
		parentName = RootName
	}
	var err error
	newParent := t.getOrPlaceholder(parentName)
	n.refused = false
	if parentName == n.spec.Name || t.isAncestor(n, newParent) {
		err = fmt.Errorf("quota %s: parent %s would make a cycle; its units wait until the cycle is broken", n.spec.Name, parentName)
		n.refused = true
		newParent = t.root
		t.pruneIfUnused(t.nodes[parentName])
	}
	if n.parent != newParent {
		t.move(n, newParent)
	}
	return err
}

func (t *Tree) refusedNodes() []*node {
	var out []*node
	for _, n := range t.nodes {
		if n.refused && n.exists {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b *node) int { return strings.Compare(string(a.spec.Name), string(b.spec.Name)) })
	return out
}

// Problem reports why units of quota name cannot be admitted whatever the
// usage: the quota is one of Koordinator's own or a parent quota (for good,
// until the job names another or the quota loses its children), the quota
// does not exist, an ancestor it names does not exist, or a parent link on
// its path would make a cycle. nil when the path is sound.
func (t *Tree) Problem(name schedtypes.QuotaName) *Shortage {
	if IsSystem(name) {
		return &Shortage{Quota: name, System: true}
	}
	leaf, ok := t.nodes[name]
	if !ok || !leaf.exists {
		return &Shortage{Quota: name, NotFound: true}
	}
	var child *node // the node below n on the path from leaf
	for n := leaf; n != t.root; child, n = n, n.parent {
		switch {
		case n.refused:
			return &Shortage{Quota: name, Broken: fmt.Sprintf("the parent %s of quota %s would make a cycle", n.spec.Parent, n.spec.Name)}
		case !n.exists:
			return &Shortage{Quota: name, Broken: fmt.Sprintf("the parent %s of quota %s does not exist", n.spec.Name, child.spec.Name)}
		}
	}
	if leaf.spec.IsParent || t.hasChildQuota(leaf) {
		return &Shortage{Quota: name, Parent: true}
	}
	return nil
}

// hasChildQuota reports whether an ElasticQuota names n as its parent.
func (t *Tree) hasChildQuota(n *node) bool {
	for _, c := range n.children {
		if c.exists && !c.refused {
			return true
		}
	}
	return false
}

// Leaf reports whether quota name is known and has no quota below it,
// known or only named as a parent: nothing is under it but itself.
func (t *Tree) Leaf(name schedtypes.QuotaName) bool {
	n, ok := t.nodes[name]
	return ok && len(n.children) == 0
}

// Under reports whether quota q is quota a or below it; a quota the tree
// does not know is under nothing.
func (t *Tree) Under(q, a schedtypes.QuotaName) bool {
	qn, ok := t.nodes[q]
	an, ok2 := t.nodes[a]
	return ok && ok2 && t.isAncestor(an, qn)
}

// isAncestor reports whether a is an ancestor of (or is) b.
func (t *Tree) isAncestor(a, b *node) bool {
	for p := b; p != nil; p = p.parent {
		if p == a {
			return true
		}
	}
	return false
}

// move re-hangs n (and the usage of its subtree) under p.
func (t *Tree) move(n, p *node) {
	t.version++
	t.shape++
	old := n.parent
	for a := old; a != nil; a = a.parent {
		a.used = a.used.Sub(n.used)
		a.foreign = a.foreign.Sub(n.foreign)
	}
	delete(old.children, n.spec.Name)
	n.parent = p
	p.children[n.spec.Name] = n
	for a := p; a != nil; a = a.parent {
		a.used = a.used.Add(n.used)
		a.foreign = a.foreign.Add(n.foreign)
	}
	t.pruneIfUnused(old)
}

// Delete removes a quota. While units still use it or children name it, it
// stays as a placeholder without limits, so no usage is lost.
func (t *Tree) Delete(name schedtypes.QuotaName) {
	n, ok := t.nodes[name]
	if !ok || n == t.root {
		return
	}
	if n.exists && n.spec.NoLend {
		t.noLend--
	}
	if n.exists && n.spec.weighted() {
		t.weighted--
	}
	t.version++
	t.shape++
	n.exists = false
	n.refused = false
	n.spec = Spec{Name: name}
	if n.parent != t.root {
		t.move(n, t.root)
	}
	t.pruneIfUnused(n)
}

func (t *Tree) pruneIfUnused(n *node) {
	if n == nil || n == t.root || n.exists || len(n.children) > 0 || !n.used.IsZero() {
		return
	}
	delete(n.parent.children, n.spec.Name)
	delete(t.nodes, n.spec.Name)
	t.pruneIfUnused(n.parent)
}

// Exists reports whether an ElasticQuota of that name is known.
func (t *Tree) Exists(name schedtypes.QuotaName) bool {
	n, ok := t.nodes[name]
	return ok && n.exists && n != t.root
}

// Charge adds r to the usage of quota name and its ancestors.
func (t *Tree) Charge(name schedtypes.QuotaName, r schedtypes.Resources) {
	if r.IsZero() {
		return
	}
	for n := t.getOrPlaceholder(name); n != nil; n = n.parent {
		n.used = n.used.Add(r)
	}
	t.version++
}

// Release takes r off the usage of quota name and its ancestors.
func (t *Tree) Release(name schedtypes.QuotaName, r schedtypes.Resources) {
	n, ok := t.nodes[name]
	if !ok || r.IsZero() {
		return
	}
	for a := n; a != nil; a = a.parent {
		a.used = a.used.Sub(r)
	}
	t.version++
	t.pruneIfUnused(n)
}

// SetForeign sets what quota name uses apart from the units charged to it
// (pods koord-queue does not manage): the old amount is taken off the quota
// and its ancestors and the new one charged, like a unit's usage. It is
// never a victim. It reports whether some resource went down (room was
// freed) and whether some went up.
func (t *Tree) SetForeign(name schedtypes.QuotaName, r schedtypes.Resources) (decreased, increased bool) {
	var prev schedtypes.Resources
	if n, ok := t.nodes[name]; ok {
		prev = n.ownForeign
	}
	for k, v := range prev {
		if r[k] < v {
			decreased = true
		}
	}
	for k, v := range r {
		if v > prev[k] {
			increased = true
		}
	}
	if !decreased && !increased {
		return false, false
	}
	if !prev.IsZero() {
		n := t.nodes[name]
		n.ownForeign = nil
		for a := n; a != nil; a = a.parent {
			a.used = a.used.Sub(prev)
			a.foreign = a.foreign.Sub(prev)
		}
	}
	if !r.IsZero() {
		n := t.getOrPlaceholder(name)
		n.ownForeign = r.Clone()
		for a := n; a != nil; a = a.parent {
			a.used = a.used.Add(r)
			a.foreign = a.foreign.Add(r)
		}
	}
	t.version++
	if n, ok := t.nodes[name]; ok {
		t.pruneIfUnused(n)
	}
	return decreased, increased
}

// Cohort returns the top-level quota above name (name itself when it hangs
// from the root). Capacity freed anywhere in a cohort can only help units of
// the same cohort.
// KeepsMins reports whether some quota keeps its unused min from others
// (does not lend it): room at a node then depends on more than its usage.
func (t *Tree) KeepsMins() bool { return t.noLend > 0 }

func (t *Tree) Cohort(name schedtypes.QuotaName) schedtypes.CohortName {
	n, ok := t.nodes[name]
	if !ok {
		return schedtypes.CohortName(name)
	}
	for n.parent != nil && n.parent != t.root {
		n = n.parent
	}
	return schedtypes.CohortName(n.spec.Name)
}

// Path returns name and its ancestors, leaf first, without the root.
func (t *Tree) Path(name schedtypes.QuotaName) []schedtypes.QuotaName {
	var out []schedtypes.QuotaName
	n, ok := t.nodes[name]
	if !ok {
		return nil
	}
	for ; n != nil && n != t.root; n = n.parent {
		out = append(out, n.spec.Name)
	}
	return out
}

// Get returns a copy of one quota's state.
func (t *Tree) Get(name schedtypes.QuotaName) (schedtypes.Info, bool) {
	n, ok := t.nodes[name]
	if !ok {
		return schedtypes.Info{}, false
	}
	return t.info(n), true
}

func (t *Tree) info(n *node) schedtypes.Info {
	var parent schedtypes.QuotaName
	if n.parent != nil {
		parent = n.parent.spec.Name
	}
	children := make([]schedtypes.QuotaName, 0, len(n.children))
	for c := range n.children {
		children = append(children, c)
	}
	slices.Sort(children)
	return schedtypes.Info{Name: n.spec.Name, Parent: parent, Exists: n.exists, Min: n.spec.Min.Clone(),
		Max: n.spec.Max.Clone(), Used: n.used.Clone(), Foreign: n.foreign.Clone(), Children: children,
		IsParent: n.spec.IsParent || len(children) > 0, NoLend: n.spec.NoLend}
}

// List returns every quota but the root, by name.
func (t *Tree) List() []schedtypes.Info {
	out := make([]schedtypes.Info, 0, len(t.nodes))
	for _, n := range t.nodes {
		if n != t.root {
			out = append(out, t.info(n))
		}
	}
	slices.SortFunc(out, func(a, b schedtypes.Info) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}
