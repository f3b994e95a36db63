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

// Package scheduler is the admission loop of koord-queue: it feeds pending
// QueueUnits to the queue manager (pkg/queue), runs passes that admit them
// through the plugin framework, and writes the results asynchronously.
//
// A decision is made from memory: the admitted unit's quota is charged at once
// (assumed) and the unit leaves the pending queues, so it can never be admitted
// twice while its status write is in flight. A failed write gives the quota
// back and the unit is decided again. Usage is always rebuilt from the API
// (see docs/protocol.md), so a restarted scheduler starts from the truth.
//
// The parts, each the one owner of its state:
//   - unitCache (cache.go): every unit's last object, the quota it is charged
//     to, assume/forget of admissions in flight, and what it holds, which it
//     reports to the usage plugins;
//   - queueRegistry and queueSync (queues.go): the served Queues, their
//     priority ceilings and settings, and the Queues' status;
//   - intake (units.go): the QueueUnit informer's handlers. Each event is
//     one update of the cache, which yields a typed change (unitChange,
//     change.go: pending, admitted, deleting, deleted, ... with the old and
//     new object); intake.apply hands it to each part that follows units,
//     each acting on it in one method, unitChanged: the reporter (events),
//     the arrivals metric (leader only), the preemptor (nominations), the
//     lifecycle, and last the intake itself, which puts pending units in
//     their queues or says why they cannot be there;
//   - passDriver (cycle.go): the passes, the decision on each unit, the
//     admission writes and how many of them are in flight (the admission
//     window);
//   - preemptor (preempt.go): victim search and the nominations;
//   - reporter (reports.go): what a unit's status says of its wait, evictions
//     and lifecycle moves, as writes; statusWriter (writer.go) makes them;
//   - lifecycle (lifecycle.go): admission checks, backoff, deactivation and
//     the execution budget, each deadline a delayed key on the clock;
//   - wakeups and nodes: deadlines per cohort, and the node fit check;
//   - Snapshot (snapshot.go): read-only copies for the visibility and debug
//     APIs.
//
// Every waiting unit says why in its status (message and a QuotaReserved=False
// condition, reasons.go): texts name what stays put while others are
// admitted, and a unit is written only when its reason changes.
//
// Time is the scheduler's injected Clock: every deadline (the end of a
// protection period, admission check timeouts, backoff ends, execution
// budgets) schedules its own re-evaluation on it (wakeups, the lifecycle
// queue), so nothing waits for an unrelated change.
//
// Locks, in the only order they may be taken:
//  1. the queue manager's (a pass calls passDriver.try under it);
//  2. unitCache.mu (try decides a unit under it, and every unitState field
//     is guarded by it);
//  3. the plugins' locks (framework calls made under 2), the preemptor's,
//     queueRegistry.mu, nodes.mu, wakeups.mu and statusWriter.mu: leaves,
//     none of which calls back into 1 or 2 while held.
//
// Each lock is taken only by its owner's methods. The other parts reach a
// unit's state through the cache's doors, which take 2 for them: decide (a
// pass's decision, which assumes an admitted unit), inspect, update and
// each; inside decide, evictingLocked and candidateLocked. Each unitState
// field has one owner (cache.go lists them), and only the owner's methods
// change it: the reporter's fields are its waitReport, the node check's is
// fit, all others are the cache's.
//
// The queue manager's Freed, FreedRoom, Moved, HoldingsChanged and
// Invalidate take no lock of 1 (they bump epochs), so they may be called from
// anywhere, a plugin's Reserve inside a pass included.
package scheduler
