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
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/tools/reference"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/koordinator-sh/koord-queue/pkg/metrics"
)

// Causes of a dropped event, the cause label of koord_queue_events_dropped_total.
const (
	// CauseQueueFull: MaxPending distinct events were already waiting.
	CauseQueueFull = "queue_full"
	// CauseRejected: the API server refused the event for good (invalid,
	// forbidden, namespace gone), or it names no object we can refer to.
	CauseRejected = "rejected"
	// CauseShutdown: the event was still waiting when the binary stopped
	// and the flush ran out of time.
	CauseShutdown = "shutdown"
)

// Metrics counts what the recorder does; pkg/metrics implements it.
type Metrics interface {
	// Recorded counts one event asked for, by its reason.
	Recorded(reason string)
	// Written counts one Event object created.
	Written()
	// Dropped counts n events lost, by cause.
	Dropped(cause string, n int)
	// SetPending is the number of distinct events waiting to be written.
	SetPending(n int)
}

// Options configure a Recorder.
type Options struct {
	// Component names the binary: source.component and reportingController.
	Component string
	// Instance tells replicas apart: source.host and reportingInstance.
	Instance string
	// MaxPending bounds the distinct events waiting (default 100,000).
	MaxPending int
	// Workers write in parallel (default 4); the client's rate limit, not
	// their number, sets the pace.
	Workers int
	// FlushTimeout is how long Start keeps writing after its context ends
	// (default 10 s).
	FlushTimeout time.Duration
	// Clock times events and retries; nil is the real clock.
	Clock clock.WithTicker
	// Metrics; nil counts nothing.
	Metrics Metrics
}

// key tells identical events apart: the same object, type, reason, action,
// message and related object are one event with a count.
type key struct {
	object      corev1.ObjectReference
	related     corev1.ObjectReference
	eventType   string
	reason      string
	action      string
	message     string
	annotations string
}

// Recorder records events and writes them. Its methods are safe for
// concurrent use; Start runs the writers.
type Recorder struct {
	client  corev1client.EventsGetter
	scheme  *runtime.Scheme
	opts    Options
	metrics Metrics
	log     logr.Logger

	mu      sync.Mutex
	wake    *sync.Cond
	pending map[key]*corev1.Event
	order   []key
	// closing: Start's context ended, workers leave once nothing waits;
	// stopped: nothing writes any more.
	closing, stopped bool
	seq              uint64
	// dropsUnlogged are queue-full drops since the last log line, which is
	// written at most every dropLogInterval.
	dropsUnlogged int
	lastDropLog   time.Time
}

const dropLogInterval = 10 * time.Second

// New returns a Recorder writing through client (give it a rest config of
// its own, so events have their own QPS budget); scheme resolves the kinds
// of the objects events are about.
func New(client corev1client.EventsGetter, scheme *runtime.Scheme, opts Options) *Recorder {
	if opts.MaxPending <= 0 {
		opts.MaxPending = 100_000
	}
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.FlushTimeout <= 0 {
		opts.FlushTimeout = 10 * time.Second
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	r := &Recorder{client: client, scheme: scheme, opts: opts, metrics: opts.Metrics, log: klog.Background().WithName("events"),
		pending: map[key]*corev1.Event{}}
	if r.metrics == nil {
		r.metrics = noMetrics{}
	}
	r.wake = sync.NewCond(&r.mu)
	return r
}

var (
	_ record.EventRecorder = (*Recorder)(nil)
	_ Metrics              = (*metrics.Events)(nil)
)

// Event records an event about object (record.EventRecorder).
func (r *Recorder) Event(object runtime.Object, eventType, reason, message string) {
	r.record(object, nil, nil, eventType, reason, "", message)
}

// Eventf is Event with a format.
func (r *Recorder) Eventf(object runtime.Object, eventType, reason, messageFmt string, args ...any) {
	r.record(object, nil, nil, eventType, reason, "", format(messageFmt, args))
}

// AnnotatedEventf is Eventf with annotations on the Event.
func (r *Recorder) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventType, reason, messageFmt string, args ...any) {
	r.record(object, nil, annotations, eventType, reason, "", format(messageFmt, args))
}

// ForEventsAPI is the recorder in the shape of client-go's
// events.EventRecorder (regarding, related, action, note), which the job
// extensions use. The events are core/v1 Events all the same.
func (r *Recorder) ForEventsAPI() events.EventRecorder { return actionRecorder{r} }

type actionRecorder struct{ r *Recorder }

var _ events.EventRecorder = actionRecorder{}

func (a actionRecorder) Eventf(regarding, related runtime.Object, eventType, reason, action, note string, args ...any) {
	a.r.record(regarding, related, nil, eventType, reason, action, format(note, args))
}

// format is Sprintf, except that a message without arguments is kept as it
// is (it may hold a literal %).
func format(f string, args []any) string {
	if len(args) == 0 {
		return f
	}
	return fmt.Sprintf(f, args...)
}

// record queues one event, or counts it on an identical one still waiting.
func (r *Recorder) record(object, related runtime.Object, annotations map[string]string, eventType, reason, action, message string) {
	r.metrics.Recorded(reason)
	ref, err := reference.GetReference(r.scheme, object)
	if err != nil {
		r.metrics.Dropped(CauseRejected, 1)
		r.log.Error(err, "Event dropped: no reference to its object", "reason", reason, "message", message)
		return
	}
	k := key{object: *ref, eventType: eventType, reason: reason, action: action, message: message, annotations: flatten(annotations)}
	var relatedRef *corev1.ObjectReference
	if related != nil {
		if relatedRef, err = reference.GetReference(r.scheme, related); err == nil {
			k.related = *relatedRef
		} else {
			relatedRef = nil
		}
	}
	now := metav1.NewTime(r.opts.Clock.Now())

	r.mu.Lock()
	defer r.mu.Unlock()
	if ev, ok := r.pending[k]; ok {
		ev.Count++
		ev.LastTimestamp = now
		return
	}
	if r.stopped {
		r.metrics.Dropped(CauseShutdown, 1)
		r.log.Error(nil, "Event dropped: the recorder has stopped", "object", klog.KRef(ref.Namespace, ref.Name), "reason", reason)
		return
	}
	if len(r.pending) >= r.opts.MaxPending {
		r.metrics.Dropped(CauseQueueFull, 1)
		r.dropsUnlogged++
		r.logDrops(false)
		return
	}
	ns := ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	ev := &corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Namespace: ns, Annotations: maps.Clone(annotations)},
		InvolvedObject:      *ref,
		Related:             relatedRef,
		Reason:              reason,
		Message:             message,
		Type:                eventType,
		Action:              action,
		Count:               1,
		FirstTimestamp:      now,
		LastTimestamp:       now,
		Source:              corev1.EventSource{Component: r.opts.Component, Host: r.opts.Instance},
		ReportingController: r.opts.Component,
		ReportingInstance:   r.opts.Instance,
	}
	r.pending[k] = ev
	r.order = append(r.order, k)
	r.metrics.SetPending(len(r.pending))
	r.wake.Signal()
}

// logDrops logs the queue-full drops not logged yet, at most once every
// dropLogInterval unless now; r.mu is held.
func (r *Recorder) logDrops(now bool) {
	t := r.opts.Clock.Now()
	if r.dropsUnlogged == 0 || !now && t.Sub(r.lastDropLog) < dropLogInterval {
		return
	}
	r.log.Error(nil, "Events dropped: too many waiting to be written", "dropped", r.dropsUnlogged, "maxPending", r.opts.MaxPending)
	r.dropsUnlogged, r.lastDropLog = 0, t
}

func flatten(m map[string]string) string {
	if len(m) == 0 {
		return ""
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(m[k])
		b.WriteByte(0)
	}
	return b.String()
}

// Pending is the number of distinct events waiting to be written.
func (r *Recorder) Pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending)
}

// NeedLeaderElection is false: a replica that lost its lease still writes
// the events it recorded while it led.
func (r *Recorder) NeedLeaderElection() bool { return false }

// Start writes events until ctx ends, then keeps writing what waits for up
// to FlushTimeout; what is left then is counted as dropped and logged.
func (r *Recorder) Start(ctx context.Context) error {
	flush, stopFlush := context.WithCancel(context.WithoutCancel(ctx))
	defer stopFlush()
	var wg sync.WaitGroup
	for range r.opts.Workers {
		wg.Go(func() { r.work(flush) })
	}
	<-ctx.Done()
	r.mu.Lock()
	r.closing = true
	r.wake.Broadcast()
	r.mu.Unlock()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-r.opts.Clock.After(r.opts.FlushTimeout):
		stopFlush()
		<-done
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	r.logDrops(true)
	if n := r.countPending(); n > 0 {
		r.metrics.Dropped(CauseShutdown, n)
		r.log.Error(nil, "Events dropped: still waiting when the binary stopped", "dropped", n)
	}
	clear(r.pending)
	r.order = nil
	r.metrics.SetPending(0)
	return nil
}

// countPending sums the counts of the waiting events; r.mu is held.
func (r *Recorder) countPending() int {
	n := 0
	for _, ev := range r.pending {
		n += int(ev.Count)
	}
	return n
}

// work writes the oldest waiting event, one at a time, until the recorder
// closes and nothing waits.
func (r *Recorder) work(ctx context.Context) {
	for {
		r.mu.Lock()
		for len(r.order) == 0 && !r.closing {
			r.wake.Wait()
		}
		if len(r.order) == 0 {
			r.mu.Unlock()
			return
		}
		// Drops logged late are logged when the queue moves again.
		r.logDrops(false)
		k := r.order[0]
		r.order[0] = key{}
		r.order = r.order[1:]
		ev := r.pending[k]
		// From here on an identical event waits (and counts) anew.
		delete(r.pending, k)
		r.metrics.SetPending(len(r.pending))
		r.seq++
		seq := r.seq
		r.mu.Unlock()
		r.write(ctx, ev, seq)
	}
}

// write creates ev, retrying with a backoff until it is written, refused for
// good, or ctx ends. A retry keeps the name, so an event whose create
// succeeded though its answer was lost is not written twice.
func (r *Recorder) write(ctx context.Context, ev *corev1.Event, seq uint64) {
	// A name unique to this recorder: the object, the time, a sequence.
	ev.Name = fmt.Sprintf("%s.%x.%x", ev.InvolvedObject.Name, ev.FirstTimestamp.UnixNano(), seq)
	delay, retried := 50*time.Millisecond, false
	for {
		_, err := r.client.Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{})
		switch {
		case err == nil, apierrors.IsAlreadyExists(err) && retried:
			r.metrics.Written()
			return
		case apierrors.IsAlreadyExists(err):
			ev.Name += "-"
			continue
		case ctx.Err() != nil:
			r.dropped(CauseShutdown, ev, err)
			return
		case refusedForGood(err):
			r.dropped(CauseRejected, ev, err)
			return
		}
		retried = true
		r.log.V(2).Info("Event write failed; retrying", "object", klog.KRef(ev.InvolvedObject.Namespace, ev.InvolvedObject.Name), "reason", ev.Reason, "err", err.Error(), "after", delay)
		select {
		case <-ctx.Done():
		case <-r.opts.Clock.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// dropped counts and logs an event that will not be written.
func (r *Recorder) dropped(cause string, ev *corev1.Event, err error) {
	r.metrics.Dropped(cause, int(ev.Count))
	r.log.Error(err, "Event dropped", "cause", cause, "object", klog.KRef(ev.InvolvedObject.Namespace, ev.InvolvedObject.Name), "reason", ev.Reason, "count", ev.Count)
}

// refusedForGood tells errors that another try cannot fix.
func refusedForGood(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsNotFound(err) ||
		apierrors.IsBadRequest(err) || apierrors.IsMethodNotSupported(err) || apierrors.IsRequestEntityTooLargeError(err)
}

type noMetrics struct{}

func (noMetrics) Recorded(string)     {}
func (noMetrics) Written()            {}
func (noMetrics) Dropped(string, int) {}
func (noMetrics) SetPending(int)      {}

// NewForConfig builds a Recorder whose client is its own: a copy of cfg
// limited to qps and burst, so events neither wait for nor delay the
// binary's other requests. Events are a built-in kind, so they go both ways
// in protobuf, which costs this process and the API server less than JSON.
func NewForConfig(cfg *rest.Config, qps float32, burst int, scheme *runtime.Scheme, opts Options) (*Recorder, error) {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = qps, burst
	c.ContentType = runtime.ContentTypeProtobuf
	c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	client, err := corev1client.NewForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("events client: %w", err)
	}
	return New(client, scheme, opts), nil
}
