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

package eventrecorder

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"
)

// counts is a Metrics that remembers.
type counts struct {
	mu       sync.Mutex
	recorded int
	written  int
	dropped  map[string]int
}

func (c *counts) Recorded(string) { c.mu.Lock(); c.recorded++; c.mu.Unlock() }
func (c *counts) Written()        { c.mu.Lock(); c.written++; c.mu.Unlock() }
func (c *counts) Dropped(cause string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped == nil {
		c.dropped = map[string]int{}
	}
	c.dropped[cause] += n
}
func (c *counts) SetPending(int) {}

func (c *counts) get() (recorded, written int, dropped map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := map[string]int{}
	for k, v := range c.dropped {
		d[k] = v
	}
	return c.recorded, c.written, d
}

// logLines collects log lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		l.lines = append(l.lines, prefix+" "+args)
		l.mu.Unlock()
	}, funcr.Options{})
}

func (l *logLines) with(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, x := range l.lines {
		if strings.Contains(x, s) {
			n++
		}
	}
	return n
}

func pod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)}}
}

// start runs r until the returned stop is called; stop waits for Start.
func start(t *testing.T, r *Recorder) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = r.Start(ctx); close(done) }()
	return func() { cancel(); <-done }
}

func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func listed(t *testing.T, c *fake.Clientset) []corev1.Event {
	t.Helper()
	l, err := c.CoreV1().Events("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// TestIdenticalEventsShareOneWrite: events recorded while an identical one
// waits raise its count; other messages, reasons or objects are written apart.
func TestIdenticalEventsShareOneWrite(t *testing.T) {
	c := fake.NewClientset()
	m := &counts{}
	r := New(c.CoreV1(), scheme.Scheme, Options{Component: "koord-queue", Instance: "test", Metrics: m})
	for range 5 {
		r.Eventf(pod("a"), corev1.EventTypeNormal, "Scheduled", "Admitted by queue %s", "q1")
	}
	r.Event(pod("a"), corev1.EventTypeNormal, "Scheduled", "Admitted by queue q2")
	r.Event(pod("b"), corev1.EventTypeNormal, "Scheduled", "Admitted by queue q1")
	r.Event(pod("a"), corev1.EventTypeWarning, "Preempted", "Admitted by queue q1")
	r.ForEventsAPI().Eventf(pod("a"), pod("b"), corev1.EventTypeNormal, "Resumed", "Resume", "50% done")
	if got := r.Pending(); got != 5 {
		t.Fatalf("pending = %d, want 5 distinct events", got)
	}
	stop := start(t, r)
	defer stop()
	poll(t, "5 events written", func() bool { _, w, _ := m.get(); return w == 5 })

	type row struct {
		Object, Type, Reason, Message, Action, Related, Component string
		Count                                                     int32
	}
	var got []row
	for _, e := range listed(t, c) {
		rel := ""
		if e.Related != nil {
			rel = e.Related.Name
		}
		got = append(got, row{e.InvolvedObject.Name, e.Type, e.Reason, e.Message, e.Action, rel, e.Source.Component, e.Count})
		if e.FirstTimestamp.IsZero() || e.LastTimestamp.IsZero() || e.ReportingController != "koord-queue" || e.InvolvedObject.Kind != "Pod" {
			t.Errorf("event %s lacks times, controller or kind: %+v", e.Name, e)
		}
	}
	want := []row{
		{"a", "Normal", "Resumed", "50% done", "Resume", "b", "koord-queue", 1},
		{"a", "Normal", "Scheduled", "Admitted by queue q1", "", "", "koord-queue", 5},
		{"a", "Normal", "Scheduled", "Admitted by queue q2", "", "", "koord-queue", 1},
		{"a", "Warning", "Preempted", "Admitted by queue q1", "", "", "koord-queue", 1},
		{"b", "Normal", "Scheduled", "Admitted by queue q1", "", "", "koord-queue", 1},
	}
	less := func(a, b row) bool { return fmt.Sprint(a) < fmt.Sprint(b) }
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(less)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if rec, _, d := m.get(); rec != 9 || len(d) != 0 {
		t.Errorf("recorded %d (want 9), dropped %v (want none)", rec, d)
	}
}

// TestFullQueueDropsAreCountedAndLogged: beyond MaxPending distinct events,
// a new one is dropped, counted and logged; one identical to a waiting event
// still counts there.
func TestFullQueueDropsAreCountedAndLogged(t *testing.T) {
	c := fake.NewClientset()
	m := &counts{}
	logs := &logLines{}
	r := New(c.CoreV1(), scheme.Scheme, Options{MaxPending: 2, Metrics: m})
	r.log = logs.logger()
	r.Event(pod("a"), corev1.EventTypeNormal, "Scheduled", "m")
	r.Event(pod("b"), corev1.EventTypeNormal, "Scheduled", "m")
	r.Event(pod("c"), corev1.EventTypeNormal, "Scheduled", "m")
	r.Event(pod("d"), corev1.EventTypeNormal, "Scheduled", "m")
	r.Event(pod("a"), corev1.EventTypeNormal, "Scheduled", "m")
	if _, _, d := m.get(); !cmp.Equal(d, map[string]int{CauseQueueFull: 2}) {
		t.Errorf("dropped = %v, want 2 queue_full", d)
	}
	if n := logs.with("too many waiting"); n != 1 {
		t.Errorf("%d log lines about the drops, want 1 (rate limited): %v", n, logs.lines)
	}
	stop := start(t, r)
	poll(t, "2 events written", func() bool { _, w, _ := m.get(); return w == 2 })
	total := 0
	for _, e := range listed(t, c) {
		total += int(e.Count)
	}
	if total != 3 {
		t.Errorf("events listed count %d, want 3 (a twice, b once)", total)
	}
	stop()
	// The drop not logged at once is logged by the stop at the latest.
	if n := logs.with(`"dropped"=1`); n != 2 {
		t.Errorf("%d log lines of one drop each, want 2: %v", n, logs.lines)
	}
}

// TestRefusedEventsAreCounted: an event the API server refuses for good is
// counted as rejected and logged; one refused for a while is retried.
func TestRefusedEventsAreCounted(t *testing.T) {
	c := fake.NewClientset()
	var mu sync.Mutex
	busy := 2
	c.PrependReactor("create", "events", func(a clienttesting.Action) (bool, runtime.Object, error) {
		ev := a.(clienttesting.CreateAction).GetObject().(*corev1.Event)
		switch ev.InvolvedObject.Name {
		case "forbidden":
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, ev.Name, fmt.Errorf("no"))
		case "busy":
			mu.Lock()
			defer mu.Unlock()
			if busy > 0 {
				busy--
				return true, nil, apierrors.NewTooManyRequests("slow down", 0)
			}
		}
		return false, nil, nil
	})
	m := &counts{}
	logs := &logLines{}
	clk := testingclock.NewFakeClock(time.Now())
	r := New(c.CoreV1(), scheme.Scheme, Options{Metrics: m, Clock: clk, Workers: 1})
	r.log = logs.logger()
	stop := start(t, r)
	defer stop()
	r.Event(pod("forbidden"), corev1.EventTypeNormal, "Scheduled", "m")
	r.Event(pod("busy"), corev1.EventTypeNormal, "Scheduled", "m")
	for range 2 {
		poll(t, "a retry waiting", clk.HasWaiters)
		clk.Step(10 * time.Second)
	}
	poll(t, "the busy event written", func() bool { _, w, _ := m.get(); return w == 1 })
	if _, _, d := m.get(); !cmp.Equal(d, map[string]int{CauseRejected: 1}) {
		t.Errorf("dropped = %v, want 1 rejected", d)
	}
	if logs.with("Event dropped") != 1 || logs.with("forbidden") == 0 {
		t.Errorf("want one log line naming the refused event: %v", logs.lines)
	}
}

// TestEventsLeftAtShutdownAreCounted: events the API server never takes are
// counted as dropped when the flush time runs out.
func TestEventsLeftAtShutdownAreCounted(t *testing.T) {
	c := fake.NewClientset()
	c.PrependReactor("create", "events", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("down")
	})
	m := &counts{}
	clk := testingclock.NewFakeClock(time.Now())
	r := New(c.CoreV1(), scheme.Scheme, Options{Metrics: m, Clock: clk, Workers: 1, FlushTimeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = r.Start(ctx); close(done) }()
	for range 3 {
		r.Event(pod("a"), corev1.EventTypeNormal, "Scheduled", "m")
	}
	r.Event(pod("b"), corev1.EventTypeNormal, "Scheduled", "m")
	poll(t, "a retry waiting", clk.HasWaiters)
	cancel()
	// The retry and the flush both wait on the clock; the flush ends.
	poll(t, "the flush waiting", func() bool { return clk.Waiters() == 2 })
	clk.Step(time.Minute)
	<-done
	if _, w, d := m.get(); w != 0 || !cmp.Equal(d, map[string]int{CauseShutdown: 4}) {
		t.Errorf("written %d, dropped %v; want 0 and 4 at shutdown", w, d)
	}
	r.Event(pod("c"), corev1.EventTypeNormal, "Scheduled", "m")
	if _, _, d := m.get(); d[CauseShutdown] != 5 {
		t.Errorf("an event after the stop is not counted: %v", d)
	}
}
