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

package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Names of the event metrics both binaries export (pkg/eventrecorder).
const (
	MetricEventsRecorded = "koord_queue_events_recorded_total"
	MetricEventsWritten  = "koord_queue_events_written_total"
	MetricEventsDropped  = "koord_queue_events_dropped_total"
	MetricEventsPending  = "koord_queue_events_pending"
)

// Events counts the events a binary records, writes and drops.
type Events struct {
	recorded *prometheus.CounterVec
	written  prometheus.Counter
	dropped  *prometheus.CounterVec
	pending  prometheus.Gauge
}

// NewEvents builds the event metrics; Register exposes them.
func NewEvents() *Events {
	e := &Events{
		recorded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricEventsRecorded,
			Help: "Events recorded, by reason; identical events waiting together are written once, with a count.",
		}, []string{"reason"}),
		written: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricEventsWritten,
			Help: "Event objects created in the API.",
		}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricEventsDropped,
			Help: "Events lost, by cause: queue_full (too many waiting), rejected (refused by the API server), shutdown (still waiting at exit).",
		}, []string{"cause"}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: MetricEventsPending,
			Help: "Distinct events waiting to be written.",
		}),
	}
	// Every cause shows, at 0, from the start.
	for _, c := range []string{"queue_full", "rejected", "shutdown"} {
		e.dropped.WithLabelValues(c)
	}
	return e
}

// Recorded counts one event asked for.
func (e *Events) Recorded(reason string) { e.recorded.WithLabelValues(reason).Inc() }

// Written counts one Event object created.
func (e *Events) Written() { e.written.Inc() }

// Dropped counts n events lost for cause.
func (e *Events) Dropped(cause string, n int) { e.dropped.WithLabelValues(cause).Add(float64(n)) }

// SetPending sets the number of distinct events waiting.
func (e *Events) SetPending(n int) { e.pending.Set(float64(n)) }

// Register exposes the event metrics on reg.
func (e *Events) Register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{e.recorded, e.written, e.dropped, e.pending} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
