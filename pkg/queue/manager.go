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

package queue

import (
	"slices"
	"sync"
	"time"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// Manager holds every pending unit, grouped by queue.
type Manager struct {
	mu     sync.Mutex
	less   schedtypes.Less
	queues map[schedtypes.QueueName]*pendingQueue
	units  map[schedtypes.UnitKey]*schedtypes.Unit
	// unitQueue maps a unit key to the queue it waits in ("" when its queue
	// does not exist yet).
	unitQueue map[schedtypes.UnitKey]schedtypes.QueueName
	// orphans are units whose queue does not exist, by queue name.
	orphans map[schedtypes.QueueName]map[schedtypes.UnitKey]*schedtypes.Unit
	// starting are the admitted units whose pods do not run yet
	// (wait-for-pods-running).
	starting startingSet

	// epochs has its own lock so that Freed and Invalidate never wait for a
	// pass: callers may hold locks that a pass takes.
	epochs epochs
	// order says in which order a pass serves the queues.
	order servingOrder

	// kick is signalled whenever a pass could admit something new.
	kick chan struct{}
	// priorityMajor is true when less orders by priority first, so the
	// units after a position never outrank it.
	priorityMajor bool
	// now tells time for MaxWait.
	now func() time.Time

	// held is the room held in cohorts for waiting units (see reservations).
	held reservations
	// idleIters are queue walks kept from past passes (newIter).
	idleIters []*queueIter
}

// Option sets what a manager is built with.
type Option func(*Manager)

// WithClock makes the manager tell time with now (a fake clock in tests).
func WithClock(now func() time.Time) Option { return func(m *Manager) { m.now = now } }

// WithShareOrder makes a pass serve queues of equal priority by fair share
// while on() is true (nil: always): share returns how far the queue's quota
// is into its share (lower: further below, served first). Both are called
// under the manager's lock and must not call back into the manager.
func WithShareOrder(share func(queueName schedtypes.QueueName) float64, on func() bool) Option {
	return func(m *Manager) { m.order.share, m.order.shareOn = share, on }
}

// WithGuaranteedFirst makes a pass, when it serves queues of equal priority
// by turns, serve first the queues for which guaranteed is true (their quota
// uses less than its min). It is called under the manager's lock and must
// not call back into the manager.
func WithGuaranteedFirst(guaranteed func(queueName schedtypes.QueueName) bool) Option {
	return func(m *Manager) { m.order.guaranteed = guaranteed }
}

// WithPriorityMajor tells the manager that its Less orders by priority
// (descending) before anything else, as DefaultLess does (implied when
// less is nil).
func WithPriorityMajor() Option { return func(m *Manager) { m.priorityMajor = true } }

// NewManager returns an empty manager ordering units with less (nil:
// DefaultLess).
func NewManager(less schedtypes.Less, opts ...Option) *Manager {
	priorityMajor := less == nil
	if less == nil {
		less = DefaultLess
	}
	m := &Manager{
		less: less, queues: map[schedtypes.QueueName]*pendingQueue{}, units: map[schedtypes.UnitKey]*schedtypes.Unit{},
		unitQueue: map[schedtypes.UnitKey]schedtypes.QueueName{}, orphans: map[schedtypes.QueueName]map[schedtypes.UnitKey]*schedtypes.Unit{},
		starting: newStartingSet(), epochs: epochs{global: 1, cohort: map[schedtypes.CohortName]uint64{}, unknown: map[schedtypes.CohortName]uint64{},
			freed: map[schedtypes.CohortName]schedtypes.Resources{}, taken: map[schedtypes.CohortName]schedtypes.Resources{}, quota: map[schedtypes.QuotaName]*holdingEpochs{}}, order: newServingOrder(),
		kick: make(chan struct{}, 1), priorityMajor: priorityMajor, now: time.Now, //nolint:forbidigo // the default clock; the scheduler passes its own (WithClock)
		held: newReservations(),
	}
	for _, o := range opts {
		o(m)
	}
	return m
}

// Kicked is signalled when a pass is worth running.
func (m *Manager) Kicked() <-chan struct{} { return m.kick }

func (m *Manager) signal() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// Kick asks for a pass.
func (m *Manager) Kick() { m.signal() }

// UpsertQueue adds or changes a queue. Units keep their place; a policy or
// threshold change takes effect in the next pass, and a queue that stops
// holding room gives up the room held for its units at once.
func (m *Manager) UpsertQueue(s Settings) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q, ok := m.queues[s.Name]
	if !ok {
		q = &pendingQueue{}
		m.queues[s.Name] = q
	}
	if !ok || q.Priority != s.Priority {
		m.order.reset()
	}
	q.Settings = s
	q.unsettle()
	if !s.HoldRoom {
		// Opted out: its units hold nothing from now on.
		m.held.dropQueue(s.Name)
	}
	for _, u := range m.orphans[s.Name] {
		q.insert(u, m.less)
		m.unitQueue[u.Key] = s.Name
	}
	delete(m.orphans, s.Name)
	// A policy change can unblock units: try everything again.
	m.epochs.invalidate()
	m.signal()
}

// DeleteQueue removes a queue; its units stay pending, waiting for it to come back.
func (m *Manager) DeleteQueue(name schedtypes.QueueName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q, ok := m.queues[name]
	if !ok {
		return
	}
	delete(m.queues, name)
	m.order.reset()
	for _, u := range q.units {
		m.addOrphan(name, u)
		m.releaseHeld(u.Key)
	}
}

func (m *Manager) addOrphan(queue schedtypes.QueueName, u *schedtypes.Unit) {
	if m.orphans[queue] == nil {
		m.orphans[queue] = map[schedtypes.UnitKey]*schedtypes.Unit{}
	}
	m.orphans[queue][u.Key] = u
	m.unitQueue[u.Key] = ""
}

// QueueSettings returns a queue's settings.
func (m *Manager) QueueSettings(name schedtypes.QueueName) (Settings, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q, ok := m.queues[name]
	if !ok {
		return Settings{}, false
	}
	return q.Settings, true
}

// Upsert adds a pending unit or updates it. changed says whether something
// that can change its answer changed (spec or labels), so it is tried again.
// It returns false when the unit's queue does not exist.
func (m *Manager) Upsert(u *schedtypes.Unit, queueName schedtypes.QueueName, changed bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.units[u.Key]
	if ok {
		if !changed && old.Priority == u.Priority && old.Created.Equal(u.Created) && m.queueOf(u.Key) == queueName {
			return m.queues[queueName] != nil
		}
		m.removeLocked(old)
		if changed || old.Priority != u.Priority {
			// What it holds room for may have changed: it is decided again.
			m.releaseHeld(u.Key)
		}
		u.Enqueued = old.Enqueued
		if !changed {
			u.Pending = old.Pending
		}
	}
	m.units[u.Key] = u
	q, exists := m.queues[queueName]
	if !exists {
		m.addOrphan(queueName, u)
		return false
	}
	q.insert(u, m.less)
	m.unitQueue[u.Key] = queueName
	m.signal()
	return true
}

func (m *Manager) queueOf(key schedtypes.UnitKey) schedtypes.QueueName {
	if q, ok := m.unitQueue[key]; ok && q != "" {
		return q
	}
	for name, set := range m.orphans {
		if _, ok := set[key]; ok {
			return name
		}
	}
	return ""
}

// Delete forgets a unit (admitted, finished or gone).
func (m *Manager) Delete(key schedtypes.UnitKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if u, ok := m.units[key]; ok {
		m.removeLocked(u)
		m.releaseHeld(key)
	}
}

func (m *Manager) removeLocked(u *schedtypes.Unit) {
	name := m.queueOf(u.Key)
	if q, ok := m.queues[name]; ok && m.unitQueue[u.Key] == name {
		q.remove(u, m.less)
	}
	if set, ok := m.orphans[name]; ok {
		delete(set, u.Key)
		if len(set) == 0 {
			delete(m.orphans, name)
		}
	}
	delete(m.units, u.Key)
	delete(m.unitQueue, u.Key)
}

// Get returns a pending unit.
func (m *Manager) Get(key schedtypes.UnitKey) (*schedtypes.Unit, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u, ok := m.units[key]
	return u, ok
}

// Freed says capacity was freed (or a limit raised) in a cohort, in an
// amount not counted: its units are worth trying again.
func (m *Manager) Freed(cohort schedtypes.CohortName) {
	m.epochs.freedUnknown(cohort)
	m.signal()
}

// FreedRoom says at most amount of room was given back in a cohort: its
// units refused for want of room are worth trying again once the room given
// back since covers what they lacked (see schedtypes.Recheck); its other
// units are worth trying again now.
func (m *Manager) FreedRoom(cohort schedtypes.CohortName, amount schedtypes.Resources) {
	m.epochs.freedRoom(cohort, amount)
	m.signal()
}

// Moved says something in a cohort changed that gives back no room (a
// preemptor's nomination ended): its units refused for another reason are
// worth trying again; those refused for want of room are not.
func (m *Manager) Moved(cohort schedtypes.CohortName) {
	m.epochs.moved(cohort)
	m.signal()
}

// HoldingsChanged says what the units of a quota hold changed: released
// when one gave something back (its units refused for want of room may fit,
// or reclaim, now), else a unit at priority came to hold more (a victim for
// its units of higher priority that may preempt).
func (m *Manager) HoldingsChanged(quota schedtypes.QuotaName, priority int32, released bool) {
	m.epochs.holdings(quota, priority, released)
	m.signal()
}

// Invalidate makes every unit worth trying again (the quota tree changed shape).
func (m *Manager) Invalidate() {
	m.epochs.invalidate()
	m.signal()
}

// AdmittedNotRunning records that unit key, admitted by queueName, has no
// running pods yet: a queue with wait-for-pods-running admits nothing more
// until PodsRunning(key).
func (m *Manager) AdmittedNotRunning(queueName schedtypes.QueueName, key schedtypes.UnitKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.starting.add(queueName, key)
}

// PodsRunning says a unit's pods run (or it finished, or went away): a queue
// waiting for it may go on.
func (m *Manager) PodsRunning(key schedtypes.UnitKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.starting.remove(key) {
		m.signal()
	}
}

// Starting returns the admitted units of a queue whose pods do not run yet.
func (m *Manager) Starting(queueName schedtypes.QueueName) []schedtypes.UnitKey {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.starting.of(queueName)
}

// Position is one pending unit with its place in its queue.
type Position struct {
	*schedtypes.Unit
	// Position counts from 1.
	Position int
}

// Pending returns a queue's units in scheduling order, and whether it exists.
func (m *Manager) Pending(queueName schedtypes.QueueName) ([]Position, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q, ok := m.queues[queueName]
	if !ok {
		return nil, false
	}
	out := make([]Position, len(q.units))
	for i, u := range q.units {
		// A copy: passes change the queue's own entries.
		cp := *u
		out[i] = Position{Unit: &cp, Position: i + 1}
	}
	return out, true
}

// Orphans returns, by missing queue name, the keys of units whose queue does not exist.
func (m *Manager) Orphans() map[schedtypes.QueueName][]schedtypes.UnitKey {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[schedtypes.QueueName][]schedtypes.UnitKey{}
	for name, set := range m.orphans {
		for key := range set {
			out[name] = append(out[name], key)
		}
		slices.Sort(out[name])
	}
	return out
}

// Counts returns the number of pending units per queue.
func (m *Manager) Counts() map[schedtypes.QueueName]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[schedtypes.QueueName]int, len(m.queues))
	for name, q := range m.queues {
		out[name] = len(q.units)
	}
	return out
}

// QueueStats counts a queue's pending units.
type QueueStats struct {
	// Active units will be tried in the next pass; Backoff units wait for an
	// event first.
	Active, Backoff int
}

// Stats returns the pending counts of every queue.
func (m *Manager) Stats() map[schedtypes.QueueName]QueueStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	snap := m.epochs.peek()
	out := make(map[schedtypes.QueueName]QueueStats, len(m.queues))
	for name, q := range m.queues {
		var s QueueStats
		for _, u := range q.units {
			if snap.eligible(u, &q.Settings) {
				s.Active++
			} else {
				s.Backoff++
			}
		}
		out[name] = s
	}
	return out
}

// QueueNames returns every queue's name, in serving order for the next pass.
func (m *Manager) QueueNames() []schedtypes.QueueName {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []schedtypes.QueueName
	for _, tier := range m.order.tiers(m.queues) {
		for _, q := range tier {
			out = append(out, q.Name)
		}
	}
	return out
}
