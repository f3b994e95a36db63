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

package harness

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"
)

// Names of koord-queue's event metrics (pkg/metrics), read from /metrics.
const (
	eventsPendingMetric = "koord_queue_events_pending"
	eventsDroppedMetric = "koord_queue_events_dropped_total"
)

// EventFigures check koord-queue's events against what the harness saw.
// Counts are of recorded events: an Event object with count (or series
// count) n counts n times.
type EventFigures struct {
	// Admissions (re-admissions included) against the Scheduled events.
	Admissions int `json:"admissions"`
	Scheduled  int `json:"scheduled"`
	// Evictions by the Evicted condition's reason against the events of
	// that reason (Preempted, ...).
	Evictions      map[string]int `json:"evictions"`
	EvictionEvents map[string]int `json:"evictionEvents"`
	// Releases are evictions (each gives its quota back), against the
	// Reclaimed events koord-queue records when it sees a unit release.
	Releases  int `json:"releases"`
	Reclaimed int `json:"reclaimed"`
	// Missing adds up the shortfalls above; any is a lost event and fails
	// the run (ranges: events.missing max 0).
	Missing int      `json:"missing"`
	Details []string `json:"details,omitempty"`
	// Dropped is koord_queue_events_dropped_total at the end, Pending the
	// events still waiting to be written when they were counted, WaitSeconds
	// how long the harness waited for them.
	Dropped     float64 `json:"dropped"`
	Pending     float64 `json:"pending"`
	WaitSeconds float64 `json:"waitSeconds"`
	Note        string  `json:"note,omitempty"`
}

// eventWait is what waitEventsWritten saw.
type eventWait struct {
	present          bool
	pending, dropped float64
	waited           time.Duration
}

// eventsStallLimit bounds waitEventsWritten: it waits as long as the
// events waiting to be written keep falling, and gives up once their number
// has not fallen for this long (koord-queue writes events at its own
// --event-qps, so a long run may leave minutes of them to write).
const eventsStallLimit = time.Minute

// waitEventsWritten polls koord-queue's metrics until no event waits to be
// written, or until their number stops falling (drain), so the events
// listed afterwards are all there are.
func waitEventsWritten(ctx context.Context, url string) eventWait {
	began := time.Now()
	d := newDrain(eventsStallLimit, began)
	var w eventWait
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if samples, err := scrape(url); err == nil {
			w.pending, w.present = counterSum(samples, eventsPendingMetric)
			w.dropped, _ = counterSum(samples, eventsDroppedMetric)
			if !w.present || d.done(time.Now(), w.pending) {
				break
			}
		} else if d.done(time.Now(), -1) {
			break
		}
		select {
		case <-ctx.Done():
			w.waited = time.Since(began)
			return w
		case <-tick.C:
		}
	}
	w.waited = time.Since(began)
	return w
}

// drain decides when to stop waiting for a count to reach 0: at 0, or once
// it has not reached a new low for stall.
type drain struct {
	stall time.Duration
	// low is the lowest count seen (none yet: +Inf), reached at lowAt.
	low   float64
	lowAt time.Time
}

// newDrain starts waiting at start.
func newDrain(stall time.Duration, start time.Time) *drain {
	return &drain{stall: stall, low: math.Inf(1), lowAt: start}
}

// done takes the count read at now (negative: it could not be read) and
// reports whether to stop waiting.
func (d *drain) done(now time.Time, count float64) bool {
	if count == 0 {
		return true
	}
	if count > 0 && count < d.low {
		d.low, d.lowAt = count, now
		return false
	}
	return now.Sub(d.lowAt) >= d.stall
}

// checkEvents compares the events listed by reason with the admissions and
// evictions the harness saw.
func checkEvents(s *Summary, byReason map[string]int, w eventWait) EventFigures {
	f := EventFigures{
		Admissions: s.Admissions, Scheduled: byReason["Scheduled"],
		Evictions: map[string]int{}, EvictionEvents: map[string]int{},
		Releases: s.Evictions.Total, Reclaimed: byReason["Reclaimed"],
		Dropped: w.dropped, Pending: w.pending, WaitSeconds: secs(w.waited),
	}
	short := func(what string, want, got int) {
		if got < want {
			f.Missing += want - got
			f.Details = append(f.Details, fmt.Sprintf("%s: %d events for %d", what, got, want))
		}
	}
	short("Scheduled", f.Admissions, f.Scheduled)
	reasons := make([]string, 0, len(s.Evictions.ByReason))
	for r := range s.Evictions.ByReason {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		f.Evictions[r] = s.Evictions.ByReason[r]
		f.EvictionEvents[r] = byReason[r]
		short(r, f.Evictions[r], f.EvictionEvents[r])
	}
	short("Reclaimed", f.Releases, f.Reclaimed)
	if f.Missing > 0 && w.pending > 0 {
		f.Details = append(f.Details, fmt.Sprintf("%v events were still waiting to be written when counted, after %.0f s of waiting for them (their number had stopped falling)", w.pending, secs(w.waited)))
	}
	if !w.present {
		f.Note = eventsPendingMetric + " is not exported by this koord-queue: events may still have been waiting when counted"
	}
	return f
}
