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
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/quota/foreign"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// Foreign usage (docs/protocol.md, "Beside Koordinator"): pods koord-queue
// does not manage use quota too, counted by koord-scheduler's rule
// (foreign.Index). The plugin follows every pod (slimmed by the cache,
// foreign.Slim), keeps what each one is charged, and sets the sum per quota
// on the tree (quota.Tree.SetForeign). A pod of a unit that holds quota is
// the unit's, and is not counted twice.

// foreignPods is the plugin's book of pods, under Plugin.mu.
type foreignPods struct {
	index *foreign.Index
	// pods is every pod seen, by namespace/name, with the quota it is
	// charged to ("" for none).
	pods map[string]podCharge
	// byUnit lists the pods that name each unit, for a unit that starts or
	// stops holding quota.
	byUnit map[schedtypes.UnitKey]map[string]struct{}
	// byOwner lists the pods that name no unit, by their controller's UID;
	// consumers maps the UID of a unit's job (Holding.Consumer) to the unit,
	// for the units that hold quota. A pod that names no unit but is owned
	// by such a job (it started before the job's pods were labelled, as
	// under Koord-Queue v1.8) is taken as naming that unit.
	byOwner   map[types.UID]map[string]struct{}
	consumers map[types.UID]schedtypes.UnitKey
	// sum is the foreign usage of each quota, as last set on the tree.
	sum map[schedtypes.QuotaName]schedtypes.Resources
	// touched are the quotas whose sum changed since the last flush.
	touched map[schedtypes.QuotaName]struct{}
	// freed are cohorts where room was freed, for the next caller outside
	// the lock to tell the scheduler.
	freed map[schedtypes.CohortName]struct{}
}

type podCharge struct {
	pod   foreign.Pod
	quota schedtypes.QuotaName
	// inferred: the pod names no unit; pod.UnitLabel was taken from its
	// owner (byOwner).
	inferred bool
}

func newForeignPods() *foreignPods {
	return &foreignPods{index: foreign.NewIndex(nil), pods: map[string]podCharge{},
		byUnit: map[schedtypes.UnitKey]map[string]struct{}{}, byOwner: map[types.UID]map[string]struct{}{},
		consumers: map[types.UID]schedtypes.UnitKey{}, sum: map[schedtypes.QuotaName]schedtypes.Resources{},
		touched: map[schedtypes.QuotaName]struct{}{}, freed: map[schedtypes.CohortName]struct{}{}}
}

// watchPods registers the pod handler.
func (p *Plugin) watchPods(ctx context.Context) error {
	inf, err := p.h.Cache().GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return fmt.Errorf("watch Pods (for the usage of quotas by pods koord-queue does not manage): %w", err)
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    p.onPod,
		UpdateFunc: func(_, obj any) { p.onPod(obj) },
		DeleteFunc: p.onPodDelete,
	})
	if err != nil {
		return err
	}
	p.follow.registrations = append(p.follow.registrations, reg)
	return nil
}

func (p *Plugin) onPod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	fp := foreign.FromPod(pod)
	key := pod.Namespace + "/" + pod.Name
	p.mu.Lock()
	was := p.placePodLocked(key, &fp)
	// The unit the pod names now, or the one its owner's unit is.
	freed := p.podsMovedLocked(was, p.foreign.pods[key].pod.Unit())
	notes := p.takeNotesLocked()
	p.mu.Unlock()
	p.tellHoldings(notes)
	p.tellFreed(freed)
}

// podsMovedLocked releases the tombstones of the units a pod named before
// and names now when their pods are gone (noted with the room they give
// back), flushes the foreign usage, and returns the cohorts where foreign
// usage gave back room in an amount not counted.
func (p *Plugin) podsMovedLocked(units ...schedtypes.UnitKey) []schedtypes.CohortName {
	for _, u := range units {
		if u != "" {
			p.podsChangedLocked(u)
		}
	}
	return p.flushForeignLocked()
}

func (p *Plugin) onPodDelete(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	p.mu.Lock()
	was := p.placePodLocked(pod.Namespace+"/"+pod.Name, nil)
	freed := p.podsMovedLocked(was)
	notes := p.takeNotesLocked()
	p.mu.Unlock()
	p.tellHoldings(notes)
	p.tellFreed(freed)
}

func (p *Plugin) tellFreed(cohorts []schedtypes.CohortName) {
	for _, c := range cohorts {
		p.h.Freed(c)
	}
}

// holdsLocked reports whether a unit holds quota now: its pods are its own.
func (p *Plugin) holdsLocked(key schedtypes.UnitKey) bool {
	_, ok := p.charged[key]
	return ok
}

// placePodLocked records pod key as fp (nil: gone) and moves its charge. It
// returns the unit the pod named before ("" for none).
func (p *Plugin) placePodLocked(key string, fp *foreign.Pod) (was schedtypes.UnitKey) {
	f := p.foreign
	prev, had := f.pods[key]
	if had {
		was = prev.pod.Unit()
		p.unchargePodLocked(prev)
		if prev.inferred || prev.pod.UnitLabel == "" {
			dropKey(f.byOwner, prev.pod.OwnerUID, key)
		}
		if u := prev.pod.Unit(); u != "" && (fp == nil || fp.Unit() != u) {
			if set := f.byUnit[u]; set != nil {
				delete(set, key)
				if len(set) == 0 {
					delete(f.byUnit, u)
				}
			}
		}
	}
	if fp == nil {
		delete(f.pods, key)
		return was
	}
	pod, inferred := *fp, false
	if pod.UnitLabel == "" && pod.OwnerUID != "" {
		addKey(f.byOwner, pod.OwnerUID, key)
		if unit, ok := f.consumers[pod.OwnerUID]; ok {
			if ns, name := unit.Split(); ns == pod.Namespace {
				pod.UnitLabel, inferred = name, true
			}
		}
	}
	fp = &pod
	c := podCharge{pod: pod, quota: f.index.Charge(pod, p.holdsLocked), inferred: inferred}
	f.pods[key] = c
	p.chargePodLocked(c)
	if u := fp.Unit(); u != "" {
		if f.byUnit[u] == nil {
			f.byUnit[u] = map[string]struct{}{}
		}
		f.byUnit[u][key] = struct{}{}
	}
	return was
}

func (p *Plugin) chargePodLocked(c podCharge) {
	if c.quota == "" {
		return
	}
	f := p.foreign
	f.sum[c.quota] = f.sum[c.quota].Add(c.pod.Request)
	f.touched[c.quota] = struct{}{}
}

func (p *Plugin) unchargePodLocked(c podCharge) {
	if c.quota == "" {
		return
	}
	f := p.foreign
	s := f.sum[c.quota].Sub(c.pod.Request)
	if s.IsZero() {
		delete(f.sum, c.quota)
	} else {
		f.sum[c.quota] = s
	}
	f.touched[c.quota] = struct{}{}
}

// consumerChangedLocked records that unit key's job is now consumer (""
// when the unit holds no quota) instead of was, and places again the pods
// that job owns and that name no unit.
func (p *Plugin) consumerChangedLocked(key schedtypes.UnitKey, was, consumer types.UID) {
	if was == consumer {
		return
	}
	f := p.foreign
	for _, uid := range []types.UID{was, consumer} {
		if uid == "" {
			continue
		}
		if uid == was && f.consumers[uid] == key {
			delete(f.consumers, uid)
		}
		if uid == consumer {
			f.consumers[uid] = key
		}
		for podKey := range f.byOwner[uid] {
			c := f.pods[podKey]
			pod := c.pod
			if c.inferred {
				pod.UnitLabel = ""
			}
			p.placePodLocked(podKey, &pod)
		}
	}
}

func addKey(m map[types.UID]map[string]struct{}, uid types.UID, key string) {
	if m[uid] == nil {
		m[uid] = map[string]struct{}{}
	}
	m[uid][key] = struct{}{}
}

func dropKey(m map[types.UID]map[string]struct{}, uid types.UID, key string) {
	if set := m[uid]; set != nil {
		delete(set, key)
		if len(set) == 0 {
			delete(m, uid)
		}
	}
}

// rechargePodsLocked classifies the pods of keys again (a unit started or
// stopped holding quota; the quotas changed).
func (p *Plugin) rechargePodsLocked(keys []string) {
	f := p.foreign
	for _, key := range keys {
		c, ok := f.pods[key]
		if !ok {
			continue
		}
		now := f.index.Charge(c.pod, p.holdsLocked)
		if now == c.quota {
			continue
		}
		p.unchargePodLocked(c)
		c.quota = now
		f.pods[key] = c
		p.chargePodLocked(c)
	}
}

// unitHoldingChangedLocked reclassifies the pods that name a unit.
func (p *Plugin) unitHoldingChangedLocked(key schedtypes.UnitKey) {
	if set := p.foreign.byUnit[key]; len(set) > 0 {
		p.rechargePodsLocked(slices.Collect(maps.Keys(set)))
	}
}

// reindexLocked rebuilds the quota index from the quotas seen and
// reclassifies every pod.
func (p *Plugin) reindexLocked() {
	qs := make([]foreign.Quota, 0, len(p.quotas))
	for _, eq := range p.quotas {
		qs = append(qs, foreign.Quota{Name: eq.Name, Namespace: eq.Namespace, Namespaces: allowedNamespaces(eq)})
	}
	p.foreign.index = foreign.NewIndex(qs)
	p.rechargePodsLocked(slices.Collect(maps.Keys(p.foreign.pods)))
}

// flushForeignLocked sets the changed sums on the tree and returns the
// cohorts where room was freed since the last flush, for the caller to tell
// once it let go of the lock.
func (p *Plugin) flushForeignLocked() []schedtypes.CohortName {
	p.applyForeignLocked()
	f := p.foreign
	if len(f.freed) == 0 {
		return nil
	}
	out := slices.Sorted(maps.Keys(f.freed))
	clear(f.freed)
	return out
}

// applyForeignLocked sets the changed sums on the tree; the cohorts where
// room was freed wait for the next flush (Reserve, inside the scheduling
// cycle, tells nobody).
func (p *Plugin) applyForeignLocked() {
	f := p.foreign
	for q := range f.touched {
		if eqv1alpha1.IsSystemQuota(string(q)) {
			continue
		}
		dec, inc := p.tree.SetForeign(q, f.sum[q])
		if dec || inc {
			cohort := p.tree.Cohort(q)
			p.versions[cohort]++
			if dec {
				f.freed[cohort] = struct{}{}
			}
		}
	}
	clear(f.touched)
}
