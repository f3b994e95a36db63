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
	"sort"
	"sync"
	"time"
)

// unitState is where the fake extension believes a unit is.
type unitState int

const (
	statePending  unitState = iota // created, not admitted
	stateAdmitted                  // seen Dequeued, Running not yet written
	stateRunning                   // Running written, waiting for its runtime
	stateDone                      // Succeed written
)

// unitRecord is one unit's timeline and the extension's state of it.
type unitRecord struct {
	name, class, quota, parent string
	cpuMilli                   int64
	priority                   int32
	runtime                    time.Duration

	created, firstAdmitted, lastAdmitted, finished time.Time
	admissions, evictions                          int
	// firstSeen is the first sight of the unit through the watch.
	firstSeen time.Time

	state      unitState
	runSince   time.Time
	chargeFrom time.Time
	// writtenRV is the resourceVersion of our last successful write; older
	// objects from the informer are stale and ignored.
	writtenRV int64
	// latest is the newest object seen (owned by the recorder, never mutated).
	latest any
}

// interval is a span during which a unit held quota, as the harness saw it:
// from the first sight of its admission to our write that released it. Each
// real charge of the scheduler covers its interval, so two intervals that
// overlap were charged at the same time.
type interval struct {
	unit          *unitRecord
	start, end    time.Time
	evicted       bool
	evictedReason string
}

// Recorder owns the timeline of every unit. All fields behind mu.
type Recorder struct {
	mu        sync.Mutex
	units     map[string]*unitRecord
	order     []*unitRecord
	intervals []interval
	evictions map[string]int
	remaining int
	allDone   chan struct{}
	lastEvent time.Time
}

func newRecorder(cfg *Config) *Recorder {
	r := &Recorder{units: map[string]*unitRecord{}, evictions: map[string]int{}, allDone: make(chan struct{})}
	for p := range cfg.Parents.Count {
		for c := range cfg.Children.Count {
			child := ChildName(p, c)
			for _, k := range cfg.Classes {
				for i := range k.Count {
					u := &unitRecord{
						name: unitName(child, k.Name, i), class: k.Name, quota: child, parent: ParentName(p),
						cpuMilli: k.CPU.MilliValue(), priority: k.Priority, runtime: k.Runtime.Duration,
					}
					r.units[u.name] = u
					r.order = append(r.order, u)
				}
			}
		}
	}
	r.remaining = len(r.order)
	return r
}

// closeCharge ends the unit's current interval. Callers hold mu.
func (r *Recorder) closeCharge(u *unitRecord, at time.Time, evictedReason string) {
	r.intervals = append(r.intervals, interval{unit: u, start: u.chargeFrom, end: at, evicted: evictedReason != "", evictedReason: evictedReason})
	u.chargeFrom = time.Time{}
}

// finish marks a unit done. Callers hold mu.
func (r *Recorder) finish(u *unitRecord, at time.Time) {
	u.state, u.finished = stateDone, at
	r.closeCharge(u, at, "")
	r.remaining--
	r.lastEvent = at
	if r.remaining == 0 {
		close(r.allDone)
	}
}

// progress reports how many units are done and admitted-but-not-done.
func (r *Recorder) progress() (done, running, pending int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, u := range r.order {
		switch u.state {
		case stateDone:
			done++
		case stateAdmitted, stateRunning:
			running++
		default:
			pending++
		}
	}
	return
}

// timeline is a frozen copy for the summary, intervals still open at end
// closed at end.
type timeline struct {
	units     []unitRecord
	intervals []interval
	evictions map[string]int
}

func (r *Recorder) freeze(end time.Time) timeline {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := timeline{evictions: map[string]int{}}
	for k, v := range r.evictions {
		t.evictions[k] = v
	}
	idx := map[*unitRecord]int{}
	for i, u := range r.order {
		t.units = append(t.units, *u)
		idx[u] = i
	}
	for _, iv := range r.intervals {
		iv.unit = &t.units[idx[iv.unit]]
		t.intervals = append(t.intervals, iv)
	}
	for i := range t.units {
		if u := &t.units[i]; !u.chargeFrom.IsZero() {
			t.intervals = append(t.intervals, interval{unit: u, start: u.chargeFrom, end: end})
		}
	}
	sort.Slice(t.intervals, func(i, j int) bool { return t.intervals[i].start.Before(t.intervals[j].start) })
	return t
}
