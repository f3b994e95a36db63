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

// Package queue owns the pending QueueUnits: one ordered list per Queue, the
// queue policies (Priority, Block, Intelligent) with their tuning (max-depth,
// wait-for-pods-running, priority-threshold), the order in which queues are
// served, and when a unit that did not fit is worth trying again.
//
// It is pure logic with no client: the scheduler feeds it units and queues and
// runs passes with a function that decides whether one unit fits. A Manager
// guards its state with one lock, and its parts live under it: the order in
// which a pass serves the queues (servingOrder, serve.go), the admitted
// units whose pods do not run yet (startingSet, starting.go), and the room
// held for waiting units (reservations.go). What it is built with is given
// to NewManager as options (WithClock, WithShareOrder, ...).
//
// Retrying is event driven. A unit that did not fit remembers the epoch of its
// quota cohort (the top-level quota above it) and is tried again only when the
// cohort's epoch moves (capacity freed or a quota changed), when the unit
// itself changes, or when everything is invalidated. A unit refused for want
// of room with a Lack (schedtypes.Recheck) waits for less: until its cohort
// has given back that much room since (FreedRoom's running sums, epochs.go),
// its quota gave anything back, or a unit of lower priority came to hold
// quota there while its queue may preempt (HoldingsChanged). A whole queue is
// skipped the same way: after a pass walked it, it is walked again only
// when one of these can change an answer of its units (settle.go), so a
// pass costs the queues where something happened, not every queue.
//
// It also decides which waiting units of the queues that opt in
// (Settings.HoldRoom) hold room in their cohort, so that units of lower
// priority do not take every slot they wait for (reservations.go): a unit is tried with the rooms held above it
// (Pending.Beside), and the caller's quota check counts them as used.
package queue
