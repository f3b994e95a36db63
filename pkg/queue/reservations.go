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
	"sort"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// reservations hold room in cohorts for waiting units of the queues that opt
// in (Settings.HoldRoom), so that units of lower priority do not take every
// slot a higher-priority unit waits for. A queue that did not opt in holds
// nothing for its units; they are still held back by room held for others.
// The rule: per queue and quota, the highest-ranked unit that was refused
// for room it could get once units of lower priority finish (the caller
// says so with Failure.Reserves) holds its request in its cohort; a unit of
// lower priority of the same cohort is then admitted only if it fits beside
// every such room held for units above it. A unit that can never fit holds
// nothing. The room is held until the unit is admitted, is refused for
// another reason, leaves its queue, or a unit ranked above it in the same
// queue and quota takes over. The manager's lock guards them.
type reservations struct {
	byUnit  map[schedtypes.UnitKey]*holding
	byScope map[holdScope]*holding
	// inCohort are the holdings of each cohort; byCohort lists their rooms,
	// highest priority first, rebuilt for a cohort in dirty when asked for.
	// A change in one cohort costs a sort of that cohort's rooms only.
	inCohort map[schedtypes.CohortName]map[schedtypes.UnitKey]*holding
	byCohort map[schedtypes.CohortName][]schedtypes.Reservation
	dirty    map[schedtypes.CohortName]struct{}
}

type holdScope struct {
	queue schedtypes.QueueName
	quota schedtypes.QuotaName
}

type holding struct {
	unit   *schedtypes.Unit
	scope  holdScope
	cohort schedtypes.CohortName
	r      schedtypes.Reservation
}

func newReservations() reservations {
	return reservations{byUnit: map[schedtypes.UnitKey]*holding{}, byScope: map[holdScope]*holding{},
		inCohort: map[schedtypes.CohortName]map[schedtypes.UnitKey]*holding{}, byCohort: map[schedtypes.CohortName][]schedtypes.Reservation{}, dirty: map[schedtypes.CohortName]struct{}{}}
}

// beside returns the rooms held in u's cohort for units of higher priority
// than u, highest first.
func (rs *reservations) beside(u *schedtypes.Unit) []schedtypes.Reservation {
	if len(rs.byUnit) == 0 {
		return nil
	}
	list := rs.list(u.Cohort)
	n := sort.Search(len(list), func(i int) bool { return list[i].Priority <= u.Priority })
	if n == 0 {
		return nil
	}
	return list[:n:n]
}

// list returns the rooms held in cohort c, highest priority first.
func (rs *reservations) list(c schedtypes.CohortName) []schedtypes.Reservation {
	if _, ok := rs.dirty[c]; !ok {
		return rs.byCohort[c]
	}
	delete(rs.dirty, c)
	members := rs.inCohort[c]
	if len(members) == 0 {
		delete(rs.byCohort, c)
		return nil
	}
	// A fresh slice: lists handed out before (Pending.Beside) stay as they were.
	list := make([]schedtypes.Reservation, 0, len(members))
	for _, h := range members {
		list = append(list, h.r)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].Priority != list[j].Priority {
			return list[i].Priority > list[j].Priority
		}
		return list[i].Unit < list[j].Unit
	})
	rs.byCohort[c] = list
	return list
}

// add and remove keep the per-cohort index of h.
func (rs *reservations) add(h *holding) {
	if rs.inCohort[h.cohort] == nil {
		rs.inCohort[h.cohort] = map[schedtypes.UnitKey]*holding{}
	}
	rs.inCohort[h.cohort][h.r.Unit] = h
	rs.dirty[h.cohort] = struct{}{}
}

func (rs *reservations) remove(h *holding) {
	delete(rs.inCohort[h.cohort], h.r.Unit)
	if len(rs.inCohort[h.cohort]) == 0 {
		delete(rs.inCohort, h.cohort)
	}
	rs.dirty[h.cohort] = struct{}{}
}

// note records the outcome of trying u in queue q: u holds room when q
// holds room (hold), f says it could fit once lower units finish and no unit
// ranked above it in its queue and quota holds room. It returns whether u holds room now and the
// cohorts where room held before was given up (their units are worth
// trying again).
func (rs *reservations) note(u *schedtypes.Unit, q schedtypes.QueueName, hold bool, f *schedtypes.Failure, less schedtypes.Less) (bool, []schedtypes.CohortName) {
	scope := holdScope{queue: q, quota: u.Quota}
	wants := hold && f.Reserves && !f.NeverFits && !f.HeldBack
	var freed []schedtypes.CohortName
	if old := rs.byUnit[u.Key]; old != nil && (!wants || old.scope != scope || old.cohort != u.Cohort || !old.r.Request.Equal(u.Request) || old.r.Priority != u.Priority) {
		freed = append(freed, rs.drop(u.Key))
	}
	if !wants {
		return false, freed
	}
	if cur := rs.byScope[scope]; cur != nil && cur.unit.Key != u.Key {
		if !less(u, cur.unit) {
			return false, freed
		}
		// u takes over; the units held back by cur are held back by u too,
		// unless u asks less of something.
		if c := rs.drop(cur.unit.Key); !u.Request.Covers(cur.r.Request) {
			freed = append(freed, c)
		}
	}
	if h := rs.byUnit[u.Key]; h != nil {
		h.unit = u
	} else {
		h := &holding{unit: u, scope: scope, cohort: u.Cohort,
			r: schedtypes.Reservation{Unit: u.Key, Priority: u.Priority, Quota: u.Quota, Request: u.Request}}
		rs.byUnit[u.Key], rs.byScope[scope] = h, h
		rs.add(h)
	}
	return true, freed
}

// drop gives up the room held for unit key, if any, and returns its cohort
// ("" when it held none).
func (rs *reservations) drop(key schedtypes.UnitKey) schedtypes.CohortName {
	h := rs.byUnit[key]
	if h == nil {
		return ""
	}
	delete(rs.byUnit, key)
	if rs.byScope[h.scope] == h {
		delete(rs.byScope, h.scope)
	}
	rs.remove(h)
	return h.cohort
}

// noteHeld lets u, just refused in queue q with f, hold room or give it up
// (see reservations). Cohorts where room was given up are worth trying
// again. The holder's own text stays why it does not fit: the units that
// wait beside its room name it, and changing its reason whenever the holder
// of a queue changes would rewrite statuses for nothing.
func (m *Manager) noteHeld(u *schedtypes.Unit, q Settings, f *schedtypes.Failure) {
	_, freed := m.held.note(u, q.Name, q.HoldRoom, f, m.less)
	for _, c := range freed {
		m.epochs.moved(c)
	}
	if len(freed) > 0 {
		m.signal()
	}
}

// dropQueue gives up the room held for the units of queue q (it no longer
// holds room); their cohorts are worth trying again.
func (rs *reservations) dropQueue(q schedtypes.QueueName) []schedtypes.CohortName {
	var freed []schedtypes.CohortName
	for key, h := range rs.byUnit {
		if h.scope.queue == q {
			freed = append(freed, rs.drop(key))
		}
	}
	return freed
}

// releaseHeld gives up the room held for unit key, if any, when it leaves
// its queue without being admitted: its cohort is worth trying again.
func (m *Manager) releaseHeld(key schedtypes.UnitKey) {
	if c := m.held.drop(key); c != "" {
		m.epochs.moved(c)
		m.signal()
	}
}

// Held lists the room held in each cohort, highest priority first (a copy,
// for views and tests).
func (m *Manager) Held() map[schedtypes.CohortName][]schedtypes.Reservation {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[schedtypes.CohortName][]schedtypes.Reservation, len(m.held.inCohort))
	for c := range m.held.inCohort {
		out[c] = append([]schedtypes.Reservation(nil), m.held.list(c)...)
	}
	return out
}
