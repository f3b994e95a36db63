package quota

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// RootName is the implicit root of the tree. It has no limits of its own.
const RootName QuotaName = "koordinator-root-quota"

// Spec is what an ElasticQuota says about itself.
type Spec struct {
	Name QuotaName
	// Parent is the parent quota's name; empty means the root.
	Parent QuotaName
	Min    Resources
	Max    Resources
	// NoLend keeps the quota's unused min from others (Koordinator's
	// allow-lent-resource: "false"): its own units get it at once, without
	// reclaim.
	NoLend bool
	// Weight is the quota's share of what its parent has above the mins of
	// its children (Koordinator's shared-weight); nil means its Max.
	Weight Resources
}

type node struct {
	spec Spec
	// exists is false for a placeholder: a quota named as a parent, or one that
	// was deleted while units still used it. A placeholder has no limits.
	exists bool
	// refused is true when the quota's parent link would make a cycle: it
	// hangs under the root until the link is fixed.
	refused  bool
	parent   *node
	children map[QuotaName]*node
	// used is what units charged to this quota and its descendants use.
	used Resources
}

// Tree is the quota tree with its usage.
type Tree struct {
	root     *node
	nodes    map[QuotaName]*node
	oversell float64
	// noLend counts the quotas that do not lend their min; while it is 0,
	// nothing is reserved and checks skip the reservations altogether.
	noLend int
	// weighted counts the quotas with an explicit shared weight; while it is
	// 0, nobody asked for fair sharing.
	weighted int
	// version counts changes of usage and shape; reserves memoizes what each
	// node reserves for its non-lending quotas, valid at reservesAt.
	version    uint64
	reserves   map[*node]Resources
	reservesAt uint64
}

// New returns an empty tree. oversell multiplies every max (1 means none).
func New(oversell float64) *Tree {
	if oversell <= 0 {
		oversell = 1
	}
	root := &node{spec: Spec{Name: RootName}, exists: true, children: map[QuotaName]*node{}}
	return &Tree{root: root, nodes: map[QuotaName]*node{RootName: root}, oversell: oversell}
}

// Oversell returns the factor applied to every max.
func (t *Tree) Oversell() float64 { return t.oversell }

func (t *Tree) getOrPlaceholder(name QuotaName) *node {
	if n, ok := t.nodes[name]; ok {
		return n
	}
	n := &node{spec: Spec{Name: name}, children: map[QuotaName]*node{}, parent: t.root}
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
	if n.exists && len(n.spec.Weight) > 0 {
		t.weighted--
	}
	if len(s.Weight) > 0 {
		t.weighted++
	}
	n.spec = Spec{Name: s.Name, Parent: s.Parent, Min: s.Min.Clone(), Max: s.Max.Clone(), NoLend: s.NoLend, Weight: s.Weight.Clone()}
	n.exists = true
	if s.NoLend {
		t.noLend++
	}
	t.version++
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
// usage: the quota does not exist, an ancestor it names does not exist, or
// a parent link on its path would make a cycle. nil when the path is sound.
func (t *Tree) Problem(name QuotaName) *Shortage {
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
	return nil
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
	old := n.parent
	for a := old; a != nil; a = a.parent {
		a.used = a.used.Sub(n.used)
	}
	delete(old.children, n.spec.Name)
	n.parent = p
	p.children[n.spec.Name] = n
	for a := p; a != nil; a = a.parent {
		a.used = a.used.Add(n.used)
	}
	t.pruneIfUnused(old)
}

// Delete removes a quota. While units still use it or children name it, it
// stays as a placeholder without limits, so no usage is lost.
func (t *Tree) Delete(name QuotaName) {
	n, ok := t.nodes[name]
	if !ok || n == t.root {
		return
	}
	if n.exists && n.spec.NoLend {
		t.noLend--
	}
	if n.exists && len(n.spec.Weight) > 0 {
		t.weighted--
	}
	t.version++
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
func (t *Tree) Exists(name QuotaName) bool {
	n, ok := t.nodes[name]
	return ok && n.exists && n != t.root
}

// Charge adds r to the usage of quota name and its ancestors.
func (t *Tree) Charge(name QuotaName, r Resources) {
	if r.IsZero() {
		return
	}
	for n := t.getOrPlaceholder(name); n != nil; n = n.parent {
		n.used = n.used.Add(r)
	}
	t.version++
}

// Release takes r off the usage of quota name and its ancestors.
func (t *Tree) Release(name QuotaName, r Resources) {
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

// Shortage says why a request does not fit.
type Shortage struct {
	// Quota is the quota (the unit's own or an ancestor) that lacks room.
	Quota QuotaName
	// For is the unit's own quota, when Quota is one of its ancestors.
	For      QuotaName
	Resource corev1.ResourceName
	// Requested, Used, Min and Limit (max x oversell) in the resource's amounts.
	Requested, Used, Min, Limit int64
	// NeverFits is true when the request alone is above the limit: waiting
	// cannot help.
	NeverFits bool
	// NotFound is true when the unit's own quota does not exist.
	NotFound bool
	// Broken, when set, says what is wrong with the tree above the quota (a
	// missing parent, a cycle): units wait until it is fixed.
	Broken string
	// Reserved is the part of Limit that quotas which do not lend their min
	// keep for themselves.
	Reserved int64
}

// Missing is how much more room the request needs.
func (s *Shortage) Missing() int64 { return s.Used + s.Reserved + s.Requested - s.Limit }

// Message renders the shortage for a unit's status and events.
func (s *Shortage) Message() string {
	r := s.Resource
	switch {
	case s.NotFound:
		return fmt.Sprintf("ElasticQuota %s not found", s.Quota)
	case s.Broken != "":
		return fmt.Sprintf("invalid quota tree: %s (label %s); the unit waits until the tree is fixed",
			s.Broken, "quota.scheduling.koordinator.sh/parent")
	case s.NeverFits:
		return fmt.Sprintf("can never fit: quota %s allows at most %s %s, the unit requests %s",
			s.Quota, Format(r, s.Limit), r, Format(r, s.Requested))
	}
	who := "quota " + s.Quota
	if s.For != "" && s.For != s.Quota {
		who += ", an ancestor of quota " + s.For + ","
	}
	kept := ""
	if s.Reserved > 0 {
		kept = fmt.Sprintf(", %s kept by quotas that do not lend their min", Format(r, s.Reserved))
	}
	return fmt.Sprintf("insufficient quota: %s has %s %s free (used %s, min %s, max %s%s), the unit requests %s %s: %s more %s needed",
		who, Format(r, max(s.Limit-s.Used-s.Reserved, 0)), r, Format(r, s.Used), Format(r, s.Min), Format(r, s.Limit), kept,
		Format(r, s.Requested), r, Format(r, s.Missing()), r)
}

// Key identifies the reason without its changing numbers: the same key means
// the unit waits for the same thing.
func (s *Shortage) Key() string {
	switch {
	case s.NotFound:
		return "notfound/" + string(s.Quota)
	case s.Broken != "":
		return "tree/" + string(s.Quota) + "/" + s.Broken
	case s.NeverFits:
		return "never/" + string(s.Quota) + "/" + string(s.Resource) + "/" + strconv.FormatInt(s.Requested, 10)
	default:
		return "short/" + string(s.Quota) + "/" + string(s.Resource)
	}
}

func (t *Tree) limit(n *node, r corev1.ResourceName) (int64, bool) {
	m, ok := n.spec.Max[r]
	if !ok {
		return 0, false
	}
	if t.oversell == 1 {
		return m, true
	}
	return int64(float64(m) * t.oversell), true
}

// Check tells whether req fits quota name and all its ancestors; nil means it
// fits. A request that can never fit is reported before one that must wait;
// among several short resources of one quota the first by name is reported.
func (t *Tree) Check(name QuotaName, req Resources) *Shortage {
	if s := t.Problem(name); s != nil {
		return s
	}
	leaf := t.nodes[name]
	if s := t.neverFits(leaf, req); s != nil {
		return s
	}
	var from *node // the child of n on the unit's path
	for n := leaf; n != t.root; from, n = n, n.parent {
		if !n.exists || len(n.spec.Max) == 0 {
			continue
		}
		reserved := t.reservedBesides(n, from)
		var worst corev1.ResourceName
		for r, v := range req {
			lim, limited := t.limit(n, r)
			if limited && n.used[r]+reserved[r]+v > lim && (worst == "" || r < worst) {
				worst = r
			}
		}
		if worst != "" {
			lim, _ := t.limit(n, worst)
			return &Shortage{Quota: n.spec.Name, For: name, Resource: worst, Requested: req[worst], Used: n.used[worst],
				Min: n.spec.Min[worst], Limit: lim, Reserved: reserved[worst]}
		}
	}
	return nil
}

// reservedBesides is what the non-lending quotas below n, other than those on
// the branch of child from, keep for themselves: their unused min. A unit
// under from may not take it.
func (t *Tree) reservedBesides(n, from *node) Resources {
	if t.noLend == 0 {
		return nil
	}
	if t.reserves == nil || t.reservesAt != t.version {
		t.reserves, t.reservesAt = map[*node]Resources{}, t.version
	}
	var out Resources
	for _, c := range n.children {
		if c != from {
			out = out.Add(t.reserveOf(c))
		}
	}
	return out
}

// reserveOf is what node n and its subtree keep from others: for a
// non-lending quota, its unused min, or what its children keep if that is
// more (their usage is part of its own); otherwise what its children keep.
func (t *Tree) reserveOf(n *node) Resources {
	if r, ok := t.reserves[n]; ok {
		return r
	}
	var kids Resources
	for _, c := range n.children {
		kids = kids.Add(t.reserveOf(c))
	}
	out := kids
	if n.exists && n.spec.NoLend {
		out = Resources{}
		for r, m := range n.spec.Min {
			out[r] = max(m-n.used[r], 0)
		}
		for r, v := range kids {
			out[r] = max(out[r], v)
		}
	}
	t.reserves[n] = out
	return out
}

// Weighted reports whether any quota has an explicit shared weight: fair
// sharing applies only then (see Share).
func (t *Tree) Weighted() bool { return t.weighted > 0 }

// Share is how far quota name is into what it may borrow, relative to its
// weight (its shared weight, else its max), on its dominant resource: the
// largest (used - min) / weight over the resources it weighs. Negative while
// it uses less than its min; lower means further below its fair share.
func (t *Tree) Share(name QuotaName) float64 {
	n, ok := t.nodes[name]
	if !ok || !n.exists {
		return 0
	}
	weight := n.spec.Weight
	if len(weight) == 0 {
		weight = n.spec.Max
	}
	share, any := 0.0, false
	for r, w := range weight {
		if w <= 0 {
			continue
		}
		s := float64(n.used[r]-n.spec.Min[r]) / float64(w)
		if !any || s > share {
			share, any = s, true
		}
	}
	return share
}

// NeverFits reports a shortage when req is above some limit on the path of
// quota name, whatever the usage.
func (t *Tree) NeverFits(name QuotaName, req Resources) *Shortage {
	leaf, ok := t.nodes[name]
	if !ok || !leaf.exists {
		return &Shortage{Quota: name, NotFound: true}
	}
	return t.neverFits(leaf, req)
}

func (t *Tree) neverFits(leaf *node, req Resources) *Shortage {
	for n := leaf; n != t.root; n = n.parent {
		if !n.exists || len(n.spec.Max) == 0 {
			continue
		}
		var worst corev1.ResourceName
		for r, v := range req {
			if lim, limited := t.limit(n, r); limited && v > lim && (worst == "" || r < worst) {
				worst = r
			}
		}
		if worst != "" {
			lim, _ := t.limit(n, worst)
			return &Shortage{Quota: n.spec.Name, Resource: worst, Requested: req[worst], Limit: lim, NeverFits: true}
		}
	}
	return nil
}

// Cohort returns the top-level quota above name (name itself when it hangs
// from the root). Capacity freed anywhere in a cohort can only help units of
// the same cohort.
func (t *Tree) Cohort(name QuotaName) CohortName {
	n, ok := t.nodes[name]
	if !ok {
		return CohortName(name)
	}
	for n.parent != nil && n.parent != t.root {
		n = n.parent
	}
	return CohortName(n.spec.Name)
}

// Path returns name and its ancestors, leaf first, without the root.
func (t *Tree) Path(name QuotaName) []QuotaName {
	var out []QuotaName
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
func (t *Tree) Get(name QuotaName) (Info, bool) {
	n, ok := t.nodes[name]
	if !ok {
		return Info{}, false
	}
	return t.info(n), true
}

func (t *Tree) info(n *node) Info {
	var parent QuotaName
	if n.parent != nil {
		parent = n.parent.spec.Name
	}
	children := make([]QuotaName, 0, len(n.children))
	for c := range n.children {
		children = append(children, c)
	}
	slices.Sort(children)
	return Info{Name: n.spec.Name, Parent: parent, Exists: n.exists, Min: n.spec.Min.Clone(),
		Max: n.spec.Max.Clone(), Used: n.used.Clone(), Children: children}
}

// List returns every quota but the root, by name.
func (t *Tree) List() []Info {
	out := make([]Info, 0, len(t.nodes))
	for _, n := range t.nodes {
		if n != t.root {
			out = append(out, t.info(n))
		}
	}
	slices.SortFunc(out, func(a, b Info) int {
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
