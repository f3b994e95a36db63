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
