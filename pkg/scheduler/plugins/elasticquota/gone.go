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
	corev1 "k8s.io/api/core/v1"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
)

// Deleted units (docs/protocol.md, "Deletion"): the extension's finalizer
// keeps a deleted unit, and its charge, until its job's pods are gone. Who
// may edit a QueueUnit may also strip that finalizer. So a unit that held
// quota and is gone from the API while pods naming it (label
// koord-queue/queue-unit) are still there and not finished keeps its charge,
// a tombstone, until the last of those pods ends, starts terminating or is
// deleted. Its pods stay the unit's meanwhile (not foreign usage), and it is
// never a victim: there is no unit left to evict.

var _ framework.GoneUsagePlugin = (*Plugin)(nil)

// UnitGone keeps what a deleted unit held while its pods are there, and
// otherwise releases it.
func (p *Plugin) UnitGone(key schedtypes.UnitKey) {
	p.mu.Lock()
	if _, held := p.charged[key]; held && p.livePodsLocked(key) {
		p.gone[key] = struct{}{}
	} else {
		delete(p.gone, key)
		p.setLocked(key, nil)
	}
	more := p.flushForeignLocked()
	notes := p.takeNotesLocked()
	p.mu.Unlock()
	p.tellHoldings(notes)
	p.tellFreed(more)
}

// livePodsLocked reports whether a pod that names unit key is there, neither
// finished nor terminating (bound to a node or not yet).
func (p *Plugin) livePodsLocked(key schedtypes.UnitKey) bool {
	for podKey := range p.foreign.byUnit[key] {
		pod := p.foreign.pods[podKey].pod
		if !pod.Terminating && pod.Phase != corev1.PodSucceeded && pod.Phase != corev1.PodFailed {
			return true
		}
	}
	return false
}

// podsChangedLocked releases the tombstone of unit key once none of its pods
// is left alive; the room it gives back is noted as any release is.
func (p *Plugin) podsChangedLocked(key schedtypes.UnitKey) {
	if _, ok := p.gone[key]; !ok || p.livePodsLocked(key) {
		return
	}
	delete(p.gone, key)
	p.setLocked(key, nil)
}
