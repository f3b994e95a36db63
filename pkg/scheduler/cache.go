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

	"k8s.io/apimachinery/pkg/util/resourceversion"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// unitState is what the scheduler remembers of one QueueUnit. Every field is
// guarded by the cache's lock, which only the cache's methods take; each
// field has one owner, named below, and only its owner's methods change it.
// Other parts see a unit's state only through the cache's doors (decide,
// inspect, update, each), under that lock.
type unitState struct {
	// The cache's. obj, queue, quota: also the written admission
	// (admissionDone).
	obj   *schedv1alpha1.QueueUnit
	queue schedtypes.QueueName
	quota schedtypes.QuotaName
	// inflight is true from the decision to admit until its write is done:
	// decide assumes, admissionDone forgets.
	inflight bool
	// holding is true when the last seen phase held quota.
	holding bool
	// evicting is true from the choice of the unit as a victim
	// (evictingLocked) until it no longer holds quota.
	evicting bool
	// deleted is true once the unit is gone; queue entries may still point
	// here.
	deleted bool
	// refusals counts the admissions of the unit the API refused in a row
	// (refused; an admission clears it).
	refusals int
	// relabelled is the quota its labels named last while it held another,
	// reported once.
	relabelled schedtypes.QuotaName

	// report is the reporter's: what the unit's status says of its wait
	// (reports.go).
	report waitReport
	// fit is the node check's last answer (nodes.go, misfit).
	fit *nodeFit
}

// waits reports whether st is a unit a pass may decide: known, pending,
// not being admitted, not being deleted. It runs under the cache's lock.
func (st *unitState) waits() bool {
	return st != nil && !st.deleted && !st.inflight && queueunit.IsPending(st.obj.Status.Phase) && st.obj.DeletionTimestamp == nil
}

// unitCache owns what the scheduler knows of every QueueUnit: the last
// object seen, the quota it is charged to, whether an admission of it is in
// flight (assume/forget), and what it holds, which it reports to the usage
// plugins (docs/protocol.md: usage follows the object). A pass decides one
// unit at a time under the cache's lock (decide), so a unit is never
// admitted twice while its write is in flight.
type unitCache struct {
	mu     sync.Mutex
	units  map[schedtypes.UnitKey]*unitState
	queues *queueRegistry
	// setUsage tells the usage plugins what a unit holds (framework.SetUsage);
	// gone that a unit was deleted (framework.UnitGone).
	setUsage func(key schedtypes.UnitKey, h *schedtypes.Holding)
	gone     func(key schedtypes.UnitKey)
}

func newUnitCache(queues *queueRegistry, setUsage func(schedtypes.UnitKey, *schedtypes.Holding), gone func(schedtypes.UnitKey)) *unitCache {
	return &unitCache{units: map[schedtypes.UnitKey]*unitState{}, queues: queues, setUsage: setUsage, gone: gone}
}

// observe records u, mapped to queueName and quotaName by the plugins, and
// returns the change. An admitted unit stays charged to the quota its
// admission recorded whatever its labels say now.
func (c *unitCache) observe(key schedtypes.UnitKey, u *schedv1alpha1.QueueUnit, queueName schedtypes.QueueName, quotaName schedtypes.QuotaName) unitChange {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.units[key]
	if st == nil {
		st = &unitState{}
		c.units[key] = st
	}
	ch := unitChange{kind: changeStale, key: key, st: st, old: st.obj, new: u}
	if older(u, st.obj) {
		// A list served from a watch cache that lags behind the API (after
		// a watch broke) can hand back a version older than one already
		// seen, such as the object an admission write returned. Taking it
		// would give back quota the unit still holds.
		return ch
	}
	if charged := chargedQuota(u, st); charged != "" && charged != quotaName {
		if st.relabelled != quotaName {
			ch.relabelled = quotaName
		}
		st.relabelled = quotaName
		quotaName = charged
		if st.queue != "" {
			// It also stays the unit of the queue that admitted it: that
			// queue counts it, and its priority ceiling applies.
			queueName = st.queue
		}
	}
	st.obj, st.queue, st.quota = u, queueName, quotaName
	ch.queue, ch.quota = queueName, quotaName
	if st.inflight {
		ch.kind = changeInFlight
		return ch
	}
	ch.kind, ch.wasHolding = kindOf(u), st.holding
	st.holding = queueunit.HoldsQuota(u.Status.Phase)
	if !st.holding {
		st.evicting = false
	}
	c.setUsage(key, st.holdingFor(key, c.queues.ceiling(st.queue)))
	return ch
}

// older reports whether u is an earlier version of the same object than
// seen (same UID, lower resourceVersion). Versions that do not compare (not
// well formed) are taken as they come.
func older(u, seen *schedv1alpha1.QueueUnit) bool {
	if seen == nil || u.UID != seen.UID {
		return false
	}
	cmp, err := resourceversion.CompareResourceVersion(u.ResourceVersion, seen.ResourceVersion)
	return err == nil && cmp < 0
}

// chargedQuota is the quota an admitted unit is charged to: the one its
// admission recorded, else (an admission written before that field, or not
// seen back yet) the one the scheduler charged; "" for a unit that holds
// nothing.
func chargedQuota(u *schedv1alpha1.QueueUnit, st *unitState) schedtypes.QuotaName {
	switch {
	case st.inflight:
		// The admission being written decided the quota.
		return st.quota
	case !queueunit.HoldsQuota(u.Status.Phase):
		return ""
	case u.Status.Quota != "":
		return schedtypes.QuotaName(u.Status.Quota)
	case st.holding:
		return st.quota
	}
	return ""
}

// remove forgets a deleted unit and what it held, and returns the change.
// An admission in flight fails with NotFound and gives its quota back then.
func (c *unitCache) remove(key schedtypes.UnitKey) unitChange {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := unitChange{kind: changeDeleted, key: key}
	st := c.units[key]
	if st != nil {
		st.deleted = true
		ch.st, ch.old, ch.queue, ch.quota = st, st.obj, st.queue, st.quota
	}
	delete(c.units, key)
	if st != nil && !st.inflight {
		c.gone(key)
	}
	return ch
}

// decide runs fn on the state of a pending queue entry under the cache's
// lock; an entry whose unit went away, was admitted or changed meanwhile is
// stale and fn is not run. A nil answer admits the unit: it is assumed, in
// flight until admissionDone, so no pass decides it again meanwhile.
func (c *unitCache) decide(entry any, fn func(st *unitState) *schedtypes.Failure) *schedtypes.Failure {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, _ := entry.(*unitState)
	if !st.waits() {
		return &schedtypes.Failure{Stale: true, HeldBack: true}
	}
	f := fn(st)
	if f == nil {
		st.inflight = true
	}
	return f
}

// inspect runs fn on a queue entry's state under the cache's lock, whatever
// the unit has become since the entry was made; fn only reads.
func (c *unitCache) inspect(entry any, fn func(st *unitState)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, _ := entry.(*unitState); st != nil {
		fn(st)
	}
}

// evictingLocked marks the unit chosen as a victim: until its eviction is in
// the API its object does not say so, and the next update would make it a
// candidate again. It runs under the lock (inside decide) and returns the
// victim's object; nil when the unit is gone.
func (c *unitCache) evictingLocked(h schedtypes.Holding) *schedv1alpha1.QueueUnit {
	st := c.units[h.Key]
	if st == nil {
		return nil
	}
	st.evicting = true
	h.Evicting = true
	c.setUsage(h.Key, &h)
	return st.obj
}

// candidateLocked reports whether a holder may be chosen as a victim: units
// whose admission is being written are not victims yet; units being deleted
// give their quota back anyway, and no sooner if evicted. It runs under the
// lock (inside decide).
func (c *unitCache) candidateLocked(key schedtypes.UnitKey) bool {
	st := c.units[key]
	return st != nil && !st.inflight && st.obj.DeletionTimestamp == nil
}

// admissionDone forgets that an admission of key is in flight. When it was
// written, written becomes the unit's object until the informer brings a
// newer one, and latest is the object to replay; when it was not, the
// quota is given back and retry is the object to decide again (nil when the
// unit no longer waits).
func (c *unitCache) admissionDone(key schedtypes.UnitKey, written *schedv1alpha1.QueueUnit, ok bool) (st *unitState, latest, retry *schedv1alpha1.QueueUnit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st = c.units[key]
	if st == nil {
		return nil, nil, nil
	}
	st.inflight = false
	if ok {
		if queueunit.IsPending(st.obj.Status.Phase) {
			// The informer has not brought our write yet.
			st.obj = written
		}
		st.holding, st.refusals = true, 0
		st.report.admitted()
		return st, st.obj, nil
	}
	c.setUsage(key, st.holdingFor(key, c.queues.ceiling(st.queue)))
	if queueunit.IsPending(st.obj.Status.Phase) {
		retry = st.obj
	}
	return st, nil, retry
}

// entry returns key's state and object when it waits (pending, not being
// admitted, not being deleted); nil otherwise.
func (c *unitCache) entry(key schedtypes.UnitKey) (*unitState, *schedv1alpha1.QueueUnit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.units[key]
	if !st.waits() {
		return nil, nil
	}
	return st, st.obj
}

// object returns the last object seen of key, and whether its admission is
// in flight; nil when the unit is unknown.
func (c *unitCache) object(key schedtypes.UnitKey) (*schedv1alpha1.QueueUnit, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.units[key]
	if st == nil {
		return nil, false
	}
	return st.obj, st.inflight
}

// update runs fn on key's state under the lock; false when key is unknown.
// A part changes there only the fields it owns (see unitState).
func (c *unitCache) update(key schedtypes.UnitKey, fn func(st *unitState)) bool {
	return c.updateOf(key, nil, fn)
}

// updateOf is update of st, key's state as the caller found it (nil: looked
// up by key), unless the unit was deleted since.
func (c *unitCache) updateOf(key schedtypes.UnitKey, st *unitState, fn func(st *unitState)) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st == nil {
		st = c.units[key]
	}
	if st == nil || st.deleted {
		return false
	}
	fn(st)
	return true
}

// refused counts an admission of key the API refused and returns how many
// were refused in a row.
func (c *unitCache) refused(key schedtypes.UnitKey) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.units[key]
	if st == nil {
		return 1
	}
	st.refusals++
	return st.refusals
}

// unitRecord is a copy of what the cache knows of one unit, for readers
// outside it.
type unitRecord struct {
	key   schedtypes.UnitKey
	obj   *schedv1alpha1.QueueUnit
	queue schedtypes.QueueName
	quota schedtypes.QuotaName
	// holding: the last seen phase holds quota; inflight: an admission is
	// being written.
	holding, inflight bool
	// told is the reason of the wait last reported (the reporter's), nil
	// when none was since the unit last held quota.
	told *schedtypes.Reason
}

// each runs fn on a copy of every unit's record, under the lock; fn must
// not call back.
func (c *unitCache) each(fn func(r unitRecord)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, st := range c.units {
		r := unitRecord{key: key, obj: st.obj, queue: st.queue, quota: st.quota, holding: st.holding, inflight: st.inflight}
		if w := st.report.wanted; w != nil {
			reason := w.Reason
			r.told = &reason
		}
		fn(r)
	}
}

// pendingEntry is a pending unit to put back in its queue.
type pendingEntry struct {
	obj   *schedv1alpha1.QueueUnit
	st    *unitState
	queue schedtypes.QueueName
	quota schedtypes.QuotaName
}

// pending lists the pending units not being admitted, of queueName only
// when it is not "".
func (c *unitCache) pending(queueName schedtypes.QueueName) []pendingEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []pendingEntry
	for _, st := range c.units {
		if queueName != "" && st.queue != queueName {
			continue
		}
		if queueunit.IsPending(st.obj.Status.Phase) && !st.inflight {
			out = append(out, pendingEntry{st.obj, st, st.queue, st.quota})
		}
	}
	return out
}

// recharge reports again what the holders of queueName hold, after the
// queue's priority ceiling changed: victim selection sees their new
// priority.
func (c *unitCache) recharge(queueName schedtypes.QueueName) {
	ceiling := c.queues.ceiling(queueName)
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, st := range c.units {
		waiting := queueunit.IsPending(st.obj.Status.Phase) && !st.inflight
		if st.queue == queueName && st.holding && !waiting {
			c.setUsage(key, st.holdingFor(key, ceiling))
		}
	}
}
