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
	"time"

	"k8s.io/utils/clock"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// Clock is what the scheduler needs of a clock: time, tickers for its work
// queues and timers for its deadlines. clock.RealClock and the fake clock of
// k8s.io/utils/clock/testing are both one.
type Clock interface {
	clock.WithTicker
	AfterFunc(d time.Duration, f func()) clock.Timer
}

// wakeups are deadlines at which a cohort's waiting units are worth trying
// again although nothing in the cluster changed: the end of a protection
// period that kept victims out. Each cohort has one timer, at its earliest
// deadline; a later deadline is asked for again by the retry the timer
// causes. wakeups has its own lock and calls fire without holding it.
type wakeups struct {
	clock Clock
	fire  func(cohort schedtypes.CohortName)

	mu     sync.Mutex
	at     map[schedtypes.CohortName]time.Time
	timers map[schedtypes.CohortName]clock.Timer
}

func newWakeups(clk Clock, fire func(cohort schedtypes.CohortName)) *wakeups {
	return &wakeups{clock: clk, fire: fire, at: map[schedtypes.CohortName]time.Time{}, timers: map[schedtypes.CohortName]clock.Timer{}}
}

// wakeAt makes cohort worth trying again at t.
func (w *wakeups) wakeAt(cohort schedtypes.CohortName, t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if cur, ok := w.at[cohort]; ok && !t.Before(cur) {
		return
	}
	if old := w.timers[cohort]; old != nil {
		old.Stop()
	}
	w.at[cohort] = t
	w.timers[cohort] = w.clock.AfterFunc(max(t.Sub(w.clock.Now()), 0), func() {
		w.mu.Lock()
		if w.at[cohort].Equal(t) {
			delete(w.at, cohort)
			delete(w.timers, cohort)
		}
		w.mu.Unlock()
		w.fire(cohort)
	})
}

// pending returns the deadline set for cohort, if any.
func (w *wakeups) pending(cohort schedtypes.CohortName) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.at[cohort]
	return t, ok
}
