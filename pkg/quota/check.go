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
	"math"

	corev1 "k8s.io/api/core/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
)

// Shortage says why a request does not fit.
type Shortage struct {
	// Quota is the quota (the unit's own or an ancestor) that lacks room.
	Quota schedtypes.QuotaName
	// For is the unit's own quota, when Quota is one of its ancestors.
	For      schedtypes.QuotaName
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
	// Foreign is the part of Used that pods koord-queue does not manage use.
	Foreign int64
	// System is true when the unit's quota is one of Koordinator's own
	// (koordinator-root-quota, -system-quota, -default-quota); Parent when
	// it has child quotas. Koordinator schedules no pod charged to either,
	// so such a unit waits until its job names another quota.
	System, Parent bool
}

// Missing is how much more room the request needs.
// The sum saturates, as every sum of the tree's checks does (see resources.AddSat).
func (s *Shortage) Missing() int64 {
	return resources.SubSat(s.Requested, resources.SubSat(resources.SubSat(s.Limit, s.Used), s.Reserved))
}

// Message renders the shortage for a unit's status and events.
func (s *Shortage) Message() string {
	r := s.Resource
	switch {
	case s.System:
		return fmt.Sprintf("quota %s is one of Koordinator's own quotas (%s, %s, %s), which koord-queue admits no unit to: label the job with %s naming one of your leaf quotas",
			s.Quota, RootName, SystemName, DefaultName, schedv1alpha1.QuotaNameLabel)
	case s.Parent:
		return fmt.Sprintf("quota %s is a parent quota (it has child quotas or the label %s: \"true\"), and Koordinator schedules no pod charged to a parent quota: label the job with %s naming a leaf quota",
			s.Quota, eqv1alpha1.IsParentLabel, schedv1alpha1.QuotaNameLabel)
	case s.NotFound:
		return fmt.Sprintf("ElasticQuota %s not found", s.Quota)
	case s.Broken != "":
		return fmt.Sprintf("invalid quota tree: %s (label %s); the unit waits until the tree is fixed",
			s.Broken, "quota.scheduling.koordinator.sh/parent")
	case s.NeverFits:
		return fmt.Sprintf("can never fit: quota %s allows at most %s %s, the unit requests %s",
			s.Quota, schedtypes.Format(r, s.Limit), r, schedtypes.Format(r, s.Requested))
	}
	who := "quota " + s.Quota
	if s.For != "" && s.For != s.Quota {
		who += ", an ancestor of quota " + s.For + ","
	}
	kept := ""
	if s.Reserved > 0 {
		kept = fmt.Sprintf(", %s kept by quotas that do not lend their min", schedtypes.Format(r, s.Reserved))
	}
	foreign := ""
	if s.Foreign > 0 {
		foreign = fmt.Sprintf(" of which %s by pods koord-queue does not manage", schedtypes.Format(r, s.Foreign))
	}
	return fmt.Sprintf("insufficient quota: %s has %s %s free (used %s%s, min %s, max %s%s), the unit requests %s %s: %s more %s needed",
		who, schedtypes.Format(r, max(resources.SubSat(resources.SubSat(s.Limit, s.Used), s.Reserved), 0)), r, schedtypes.Format(r, s.Used), foreign, schedtypes.Format(r, s.Min), schedtypes.Format(r, s.Limit), kept,
		schedtypes.Format(r, s.Requested), r, schedtypes.Format(r, s.Missing()), r)
}

// Reason is the wait without its changing numbers: the same Reason means
// the unit waits for the same thing.
func (s *Shortage) Reason() schedtypes.Reason {
	q := string(s.Quota)
	switch {
	case s.System:
		return schedtypes.Reason{Kind: schedtypes.WaitSystemQuota, Subject: q}
	case s.Parent:
		return schedtypes.Reason{Kind: schedtypes.WaitParentQuota, Subject: q}
	case s.NotFound:
		return schedtypes.Reason{Kind: schedtypes.WaitQuotaNotFound, Subject: q}
	case s.Broken != "":
		return schedtypes.Reason{Kind: schedtypes.WaitInvalidQuotaTree, Subject: q, Detail: s.Broken}
	case s.NeverFits:
		return schedtypes.Reason{Kind: schedtypes.WaitNeverFits, Subject: q, Detail: string(s.Resource), Number: s.Requested}
	default:
		return schedtypes.Reason{Kind: schedtypes.WaitInsufficientQuota, Subject: q, Detail: string(s.Resource)}
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
	// A max near the bound times an oversell rate of 2 or more is beyond
	// int64: it is held at the largest int64, in effect unlimited, instead
	// of an undefined conversion (on amd64 the smallest int64).
	f := float64(m) * t.oversell
	if f >= math.MaxInt64 {
		return math.MaxInt64, true
	}
	return int64(f), true
}

// exceeds reports whether asking req beside the amounts taken passes lim,
// without summing what could pass int64: req is compared with what is left.
func exceeds(lim, req int64, taken ...int64) bool {
	left := lim
	for _, v := range taken {
		left = resources.SubSat(left, v)
	}
	return req > left
}

// Check tells whether req fits quota name and all its ancestors; nil means it
// fits. A request that can never fit is reported before one that must wait;
// among several short resources of one quota the first by name is reported.
func (t *Tree) Check(name schedtypes.QuotaName, req schedtypes.Resources) *Shortage {
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
			if limited && exceeds(lim, v, n.used[r], reserved[r]) && (worst == "" || r < worst) {
				worst = r
			}
		}
		if worst != "" {
			lim, _ := t.limit(n, worst)
			return &Shortage{Quota: n.spec.Name, For: name, Resource: worst, Requested: req[worst], Used: n.used[worst],
				Min: n.spec.Min[worst], Limit: lim, Reserved: reserved[worst], Foreign: n.foreign[worst]}
		}
	}
	return nil
}

// reservedBesides is what the non-lending quotas below n, other than those on
// the branch of child from, keep for themselves: their unused min. A unit
// under from may not take it.
func (t *Tree) reservedBesides(n, from *node) schedtypes.Resources {
	if t.noLend == 0 {
		return nil
	}
	if t.reserves == nil || t.reservesAt != t.version {
		t.reserves, t.reservesAt = map[*node]schedtypes.Resources{}, t.version
	}
	var out schedtypes.Resources
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
func (t *Tree) reserveOf(n *node) schedtypes.Resources {
	if r, ok := t.reserves[n]; ok {
		return r
	}
	var kids schedtypes.Resources
	for _, c := range n.children {
		kids = kids.Add(t.reserveOf(c))
	}
	out := kids
	if n.exists && n.spec.NoLend {
		out = schedtypes.Resources{}
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
func (t *Tree) Share(name schedtypes.QuotaName) float64 {
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

// BelowMin reports whether quota name uses less than its min of some
// resource: room freed in its cohort is room it is guaranteed.
func (t *Tree) BelowMin(name schedtypes.QuotaName) bool {
	n, ok := t.nodes[name]
	if !ok || !n.exists {
		return false
	}
	for r, m := range n.spec.Min {
		if m > 0 && n.used[r] < m {
			return true
		}
	}
	return false
}

// NeverFits reports a shortage when req is above some limit on the path of
// quota name, whatever the usage.
func (t *Tree) NeverFits(name schedtypes.QuotaName, req schedtypes.Resources) *Shortage {
	leaf, ok := t.nodes[name]
	if !ok || !leaf.exists {
		return &Shortage{Quota: name, NotFound: true}
	}
	return t.neverFits(leaf, req)
}

func (t *Tree) neverFits(leaf *node, req schedtypes.Resources) *Shortage {
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

// WouldBorrow reports whether admitting req would take quota name above its
// min for some resource: the unit would use capacity guaranteed to others.
func (t *Tree) WouldBorrow(name schedtypes.QuotaName, req schedtypes.Resources) bool {
	return !t.withinMin(name, req)
}

// withinMin reports whether quota name, with req added, stays within its min
// for every resource req asks for.
func (t *Tree) withinMin(name schedtypes.QuotaName, req schedtypes.Resources) bool {
	n, ok := t.nodes[name]
	if !ok || !n.exists {
		return false
	}
	for r, v := range req {
		if v > 0 && exceeds(n.spec.Min[r], v, n.used[r]) {
			return false
		}
	}
	return true
}
