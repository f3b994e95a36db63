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

package scheduler

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

type fired struct {
	mu      sync.Mutex
	cohorts []schedtypes.CohortName
}

func (f *fired) fire(cohort schedtypes.CohortName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cohorts = append(f.cohorts, cohort)
}

func (f *fired) get() []schedtypes.CohortName {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]schedtypes.CohortName(nil), f.cohorts...)
}

// A deadline fires at its time and not before, with only the clock moving;
// an earlier deadline replaces a later one of the same cohort, and a later
// one does not postpone an earlier one.
func TestWakeupsFireAtTheirDeadline(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	f := &fired{}
	w := newWakeups(clk, f.fire)

	w.wakeAt("a", start.Add(5*time.Minute))
	w.wakeAt("a", start.Add(10*time.Minute)) // later: ignored
	w.wakeAt("b", start.Add(time.Minute))
	w.wakeAt("b", start.Add(30*time.Second)) // earlier: replaces
	if at, ok := w.pending("a"); !ok || !at.Equal(start.Add(5*time.Minute)) {
		t.Fatalf("a's deadline = %v, %v", at, ok)
	}

	clk.Step(29 * time.Second)
	if got := f.get(); len(got) != 0 {
		t.Fatalf("fired %v before any deadline", got)
	}
	clk.Step(time.Second)
	if diff := cmp.Diff([]schedtypes.CohortName{"b"}, f.get()); diff != "" {
		t.Fatalf("at b's deadline (-want +got):\n%s", diff)
	}
	clk.Step(4*time.Minute + 29*time.Second)
	if diff := cmp.Diff([]schedtypes.CohortName{"b"}, f.get()); diff != "" {
		t.Fatalf("a fired early or b twice (-want +got):\n%s", diff)
	}
	clk.Step(time.Second)
	if diff := cmp.Diff([]schedtypes.CohortName{"b", "a"}, f.get()); diff != "" {
		t.Fatalf("at a's deadline (-want +got):\n%s", diff)
	}
	if _, ok := w.pending("a"); ok {
		t.Error("a's deadline still pending after it fired")
	}
	// A deadline already past fires at once.
	w.wakeAt("c", start)
	clk.Step(0)
	if diff := cmp.Diff([]schedtypes.CohortName{"b", "a", "c"}, f.get()); diff != "" {
		t.Errorf("past deadline (-want +got):\n%s", diff)
	}
}
