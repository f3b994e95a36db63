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

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// startingSet holds the admitted units whose pods do not run yet, by key
// with the queue that admitted them, and by queue: a queue with
// wait-for-pods-running admits nothing more while it has one. Callers
// rebuild it from the API (Manager.AdmittedNotRunning), so a restart keeps
// a queue waiting. It is guarded by the manager's lock.
type startingSet struct {
	byKey   map[schedtypes.UnitKey]schedtypes.QueueName
	byQueue map[schedtypes.QueueName]map[schedtypes.UnitKey]struct{}
}

func newStartingSet() startingSet {
	return startingSet{byKey: map[schedtypes.UnitKey]schedtypes.QueueName{}, byQueue: map[schedtypes.QueueName]map[schedtypes.UnitKey]struct{}{}}
}

// add records that queueName admitted key, whose pods do not run yet. A
// unit recorded under another queue moves.
func (s *startingSet) add(queueName schedtypes.QueueName, key schedtypes.UnitKey) {
	if old, ok := s.byKey[key]; ok {
		if old == queueName {
			return
		}
		s.remove(key)
	}
	s.byKey[key] = queueName
	if s.byQueue[queueName] == nil {
		s.byQueue[queueName] = map[schedtypes.UnitKey]struct{}{}
	}
	s.byQueue[queueName][key] = struct{}{}
}

// remove forgets key and reports whether it was there.
func (s *startingSet) remove(key schedtypes.UnitKey) bool {
	name, ok := s.byKey[key]
	if !ok {
		return false
	}
	delete(s.byKey, key)
	delete(s.byQueue[name], key)
	if len(s.byQueue[name]) == 0 {
		delete(s.byQueue, name)
	}
	return true
}

// waits reports whether queueName has a unit whose pods do not run yet.
func (s *startingSet) waits(queueName schedtypes.QueueName) bool {
	return len(s.byQueue[queueName]) > 0
}

// of lists the units of queueName whose pods do not run yet, sorted.
func (s *startingSet) of(queueName schedtypes.QueueName) []schedtypes.UnitKey {
	out := make([]schedtypes.UnitKey, 0, len(s.byQueue[queueName]))
	for key := range s.byQueue[queueName] {
		out = append(out, key)
	}
	slices.Sort(out)
	return out
}
