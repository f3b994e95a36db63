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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCheckEvents(t *testing.T) {
	s := &Summary{Admissions: 10, Evictions: EvictionFigures{Total: 3, ByReason: map[string]int{"Preempted": 3}}}
	cases := []struct {
		name        string
		byReason    map[string]int
		wantMissing int
		wantDetails []string
	}{
		{"all there, some extra", map[string]int{"Scheduled": 12, "Preempted": 3, "Reclaimed": 4, "FailedScheduling": 7}, 0, nil},
		{"admissions and releases short", map[string]int{"Scheduled": 7, "Preempted": 3, "Reclaimed": 2}, 4,
			[]string{"Scheduled: 7 events for 10", "Reclaimed: 2 events for 3"}},
		{"no eviction event", map[string]int{"Scheduled": 10, "Reclaimed": 3}, 3, []string{"Preempted: 0 events for 3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := checkEvents(s, c.byReason, eventWait{present: true, dropped: 2})
			if f.Missing != c.wantMissing || f.Dropped != 2 || f.Note != "" {
				t.Errorf("missing %d dropped %v note %q; want missing %d, dropped 2, no note", f.Missing, f.Dropped, f.Note, c.wantMissing)
			}
			if diff := cmp.Diff(c.wantDetails, f.Details); diff != "" {
				t.Errorf("details (-want +got):\n%s", diff)
			}
		})
	}
	if f := checkEvents(s, map[string]int{}, eventWait{}); f.Note == "" {
		t.Error("no note when koord-queue does not export the pending gauge")
	}
}

// Events still waiting when counted are named beside the shortfall.
func TestCheckEventsNamesTheWaiting(t *testing.T) {
	s := &Summary{Admissions: 10}
	f := checkEvents(s, map[string]int{"Scheduled": 6}, eventWait{present: true, pending: 4, waited: 90 * time.Second})
	want := []string{"Scheduled: 6 events for 10", "4 events were still waiting to be written when counted, after 90 s of waiting for them (their number had stopped falling)"}
	if diff := cmp.Diff(want, f.Details); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}
	if f := checkEvents(s, map[string]int{"Scheduled": 10}, eventWait{present: true, pending: 4}); len(f.Details) != 0 {
		t.Errorf("details %v with nothing missing, want none", f.Details)
	}
}

// The wait for events goes on while their number falls, however long, and
// ends at 0 or once it has not fallen for the stall limit.
func TestDrain(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type read struct {
		s     int
		count float64
		done  bool
	}
	for _, c := range []struct {
		name  string
		reads []read
	}{
		{"falls slowly for longer than the limit", []read{{0, 15000, false}, {50, 14000, false}, {100, 13000, false}, {150, 9000, false}, {200, 0, true}}},
		{"stops falling", []read{{0, 500, false}, {30, 400, false}, {60, 400, false}, {89, 450, false}, {90, 400, true}}},
		{"rises then falls below its low", []read{{0, 500, false}, {50, 600, false}, {59, 499, false}, {110, 499, false}, {119, 499, true}}},
		{"never read", []read{{0, -1, false}, {59, -1, false}, {60, -1, true}}},
		{"unread, then read", []read{{0, -1, false}, {30, 100, false}, {80, -1, false}, {90, -1, true}}},
		{"already written", []read{{0, 0, true}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newDrain(time.Minute, at(0))
			for _, r := range c.reads {
				if got := d.done(at(r.s), r.count); got != r.done {
					t.Fatalf("at %d s with %v waiting: done %v, want %v", r.s, r.count, got, r.done)
				}
			}
		})
	}
}
