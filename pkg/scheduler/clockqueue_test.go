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

	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// clockQueue is a work queue for the status writer whose delays run on a
// fake clock and which moves what is due when asked (Len), so a test that
// steps the clock finds every write due at once: no goroutine, no polling.
// Keys are deduplicated as in client-go's queues.
type clockQueue struct {
	clk *clocktesting.FakeClock

	mu         sync.Mutex
	ready      []schedtypes.UnitKey
	queued     map[schedtypes.UnitKey]bool
	processing map[schedtypes.UnitKey]bool
	// again marks keys added while being processed.
	again    map[schedtypes.UnitKey]bool
	due      map[schedtypes.UnitKey]time.Time
	failures map[schedtypes.UnitKey]int
	shutdown bool
}

var _ workqueue.TypedRateLimitingInterface[schedtypes.UnitKey] = (*clockQueue)(nil)

func newClockQueue(clk *clocktesting.FakeClock) *clockQueue {
	return &clockQueue{clk: clk, queued: map[schedtypes.UnitKey]bool{}, processing: map[schedtypes.UnitKey]bool{}, again: map[schedtypes.UnitKey]bool{},
		due: map[schedtypes.UnitKey]time.Time{}, failures: map[schedtypes.UnitKey]int{}}
}

func (q *clockQueue) addLocked(key schedtypes.UnitKey) {
	switch {
	case q.processing[key]:
		q.again[key] = true
	case !q.queued[key]:
		q.queued[key] = true
		q.ready = append(q.ready, key)
	}
}

func (q *clockQueue) Add(key schedtypes.UnitKey) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addLocked(key)
}

// Len moves the keys that are due by the clock, and counts those ready.
func (q *clockQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clk.Now()
	for key, at := range q.due {
		if !at.After(now) {
			delete(q.due, key)
			q.addLocked(key)
		}
	}
	return len(q.ready)
}

// Get returns the first ready key; callers check Len first (it never blocks).
func (q *clockQueue) Get() (schedtypes.UnitKey, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown || len(q.ready) == 0 {
		return "", true
	}
	key := q.ready[0]
	q.ready = q.ready[1:]
	delete(q.queued, key)
	q.processing[key] = true
	return key, false
}

func (q *clockQueue) Done(key schedtypes.UnitKey) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.processing, key)
	if q.again[key] {
		delete(q.again, key)
		q.addLocked(key)
	}
}

func (q *clockQueue) AddAfter(key schedtypes.UnitKey, d time.Duration) {
	if d <= 0 {
		q.Add(key)
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	at := q.clk.Now().Add(d)
	if cur, ok := q.due[key]; !ok || at.Before(cur) {
		q.due[key] = at
	}
}

func (q *clockQueue) AddRateLimited(key schedtypes.UnitKey) {
	q.mu.Lock()
	n := q.failures[key]
	q.failures[key]++
	q.mu.Unlock()
	q.AddAfter(key, 5*time.Millisecond<<min(n, 16))
}

func (q *clockQueue) Forget(key schedtypes.UnitKey) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.failures, key)
}

func (q *clockQueue) NumRequeues(key schedtypes.UnitKey) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.failures[key]
}

func (q *clockQueue) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shutdown = true
}

func (q *clockQueue) ShutDownWithDrain() { q.ShutDown() }

func (q *clockQueue) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shutdown
}

// The fixture's queue keeps client-go's rules: a key is queued once, a key
// added while processed comes back after Done, and a delayed key is due
// when the clock gets there, the earliest delay winning.
func TestClockQueue(t *testing.T) {
	clk := clocktesting.NewFakeClock(testStart)
	q := newClockQueue(clk)
	q.Add("a")
	q.Add("a")
	q.AddAfter("b", time.Minute)
	q.AddAfter("b", time.Hour)
	if n := q.Len(); n != 1 {
		t.Fatalf("len = %d, want a once", n)
	}
	key, _ := q.Get()
	q.Add("a")
	if n := q.Len(); n != 0 {
		t.Fatalf("len = %d while a is processed, want 0", n)
	}
	q.Done(key)
	if n := q.Len(); n != 1 {
		t.Fatalf("len = %d after Done, want a back", n)
	}
	q.Get()
	q.Done("a")
	clk.Step(time.Minute - time.Nanosecond)
	if n := q.Len(); n != 0 {
		t.Fatalf("b due early")
	}
	clk.Step(time.Nanosecond)
	if n := q.Len(); n != 1 {
		t.Fatalf("len = %d at b's earliest delay, want 1", n)
	}
	if key, _ := q.Get(); key != "b" || q.Len() != 0 {
		t.Fatalf("got %q, want b once", key)
	}
}
