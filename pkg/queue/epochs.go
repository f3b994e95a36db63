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
	"maps"
	"sync"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// epochs count the events that can make a waiting unit fit.
type epochs struct {
	mu          sync.Mutex
	global      uint64
	invalidated uint64
	cohort      map[schedtypes.CohortName]uint64
}

func (e *epochs) freed(cohort schedtypes.CohortName) {
	e.mu.Lock()
	e.global++
	e.cohort[cohort] = e.global
	e.mu.Unlock()
}

func (e *epochs) invalidate() {
	e.mu.Lock()
	e.global++
	e.invalidated = e.global
	e.mu.Unlock()
}

// epochSnapshot is the epochs as a pass saw them when it started. Units that
// fail in the pass record its global epoch, so any event during or after the
// pass makes them eligible again.
type epochSnapshot struct {
	global, invalidated uint64
	cohort              map[schedtypes.CohortName]uint64
}

func (e *epochs) snapshot() epochSnapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := epochSnapshot{global: e.global, invalidated: e.invalidated, cohort: maps.Clone(e.cohort)}
	// Later events must compare greater than what failures record now.
	e.global++
	return s
}

func (s epochSnapshot) eligible(u *schedtypes.Unit) bool {
	if u.Pending.Failure == nil || (u.Pending.Failure.HeldBack && !u.Pending.Failure.UntilCohortChanges) {
		return true
	}
	return s.cohort[u.Cohort] > u.Pending.Epoch || s.invalidated > u.Pending.Epoch
}

// peek returns the epochs without moving them (for read-only views).
func (e *epochs) peek() epochSnapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	return epochSnapshot{global: e.global, invalidated: e.invalidated, cohort: maps.Clone(e.cohort)}
}
