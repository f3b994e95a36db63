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

import "github.com/koordinator-sh/koord-queue/pkg/schedtypes"

// holdingNote is one change to what units hold, kept under p.mu and told to
// the queues once it is released (tellHoldings): the queues keep units
// refused for want of room waiting until a change could answer them.
type holdingNote struct {
	quota schedtypes.QuotaName
	// released: a unit of quota gave something back; otherwise one at
	// priority came to hold more (or became a victim it was not before).
	released bool
	priority int32
	// freed is the room given back in cohort, nil when none.
	cohort schedtypes.CohortName
	freed  schedtypes.Resources
}

// noteLocked records the change of a unit's charge from prev (had: it held
// one) to h (nil: none), as setLocked makes it. Only the time of admission
// changing is no note: a victim search that found nobody counted the unit
// already (a unit it kept out for its protection period gives the refusal
// no Recheck).
func (p *Plugin) noteLocked(prev schedtypes.Holding, had bool, h *schedtypes.Holding) {
	switch {
	case !had && h == nil:
		return
	case !had:
		p.notes = append(p.notes, holdingNote{quota: h.Quota, priority: h.Priority})
		return
	}
	if h == nil || h.Quota != prev.Quota {
		p.notes = append(p.notes, holdingNote{quota: prev.Quota, released: true, cohort: p.tree.Cohort(prev.Quota), freed: prev.Used.Clone()})
		if h != nil {
			p.notes = append(p.notes, holdingNote{quota: h.Quota, priority: h.Priority})
		}
		return
	}
	var freed schedtypes.Resources
	for r, v := range prev.Used {
		if d := v - h.Used[r]; d > 0 {
			if freed == nil {
				freed = schedtypes.Resources{}
			}
			freed[r] = d
		}
	}
	switch {
	case freed != nil:
		p.notes = append(p.notes, holdingNote{quota: prev.Quota, released: true, cohort: p.tree.Cohort(prev.Quota), freed: freed})
	case prev.Used.Equal(h.Used) && prev.Priority == h.Priority && prev.Evicting == h.Evicting:
		// The same charge, or only its time of admission moved.
	default:
		p.notes = append(p.notes, holdingNote{quota: h.Quota, priority: min(prev.Priority, h.Priority)})
	}
}

// takeNotesLocked returns the notes kept so far and forgets them.
func (p *Plugin) takeNotesLocked() []holdingNote {
	out := p.notes
	p.notes = nil
	return out
}

// tellHoldings tells the queues the notes, outside p.mu.
func (p *Plugin) tellHoldings(notes []holdingNote) {
	for _, n := range notes {
		p.h.HoldingsChanged(n.quota, n.priority, n.released)
		if len(n.freed) > 0 {
			p.h.FreedRoom(n.cohort, n.freed)
		}
	}
}
