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
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Recorder holds the metrics updated as events happen.
type Recorder struct {
	Attempts         *prometheus.CounterVec
	AlgorithmLatency prometheus.Histogram
	ComingRate       *prometheus.CounterVec
	WaitTime         *prometheus.HistogramVec
	Preemptions      *prometheus.CounterVec
	AdmissionChecks  *prometheus.CounterVec
	Passes           prometheus.Counter
}

// NewRecorder builds the metrics; Register exposes them.
func NewRecorder() *Recorder {
	return &Recorder{
		Attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "job_schedule_attempts",
			Help: "Scheduling attempts of QueueUnits by queue and result (admitted, unschedulable, never_fits, queue_not_found).",
		}, []string{"queue", "result"}),
		AlgorithmLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "job_scheduling_algorithm_latency",
			Help:    "Duration of one scheduling pass over every queue, in seconds.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}),
		ComingRate: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "queueunits_coming_rate_by_job_type",
			Help: "QueueUnits seen by namespace, job type and status (created, admitted, finished).",
		}, []string{"namespace", "type", "status"}),
		WaitTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "koord_queue_admission_wait_seconds",
			Help:    "Time from a QueueUnit's creation to its admission, by queue.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 18),
		}, []string{"queue"}),
		Preemptions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "koord_queue_evictions_total",
			Help: "Units evicted to make room, by kind (preemption inside a quota, reclaim across quotas) and quota of the preemptor.",
		}, []string{"kind", "quota"}),
		AdmissionChecks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "koord_queue_admission_check_outcomes_total",
			Help: "Admission check results by check and outcome (Ready, Retry, Rejected, Timeout).",
		}, []string{"check", "outcome"}),
		Passes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "koord_queue_scheduling_passes_total",
			Help: "Scheduling passes run.",
		}),
	}
}

// Results of a scheduling attempt.
const (
	ResultAdmitted      = "admitted"
	ResultUnschedulable = "unschedulable"
	ResultNeverFits     = "never_fits"
	ResultQueueNotFound = "queue_not_found"
)

// Statuses of queueunits_coming_rate_by_job_type.
const (
	StatusCreated  = "created"
	StatusAdmitted = "admitted"
	StatusFinished = "finished"
)

// Pass records one pass.
func (r *Recorder) Pass(d time.Duration) {
	if r == nil {
		return
	}
	r.Passes.Inc()
	r.AlgorithmLatency.Observe(d.Seconds())
}

// Attempt records one scheduling attempt.
func (r *Recorder) Attempt(queue, result string) {
	if r == nil {
		return
	}
	r.Attempts.WithLabelValues(queue, result).Inc()
}

// Coming records a unit reaching a status.
func (r *Recorder) Coming(namespace, jobType, status string) {
	if r == nil {
		return
	}
	r.ComingRate.WithLabelValues(namespace, jobType, status).Inc()
}

// Admitted records an admission after waiting d.
func (r *Recorder) Admitted(queue string, d time.Duration) {
	if r == nil {
		return
	}
	r.WaitTime.WithLabelValues(queue).Observe(d.Seconds())
}

// Evicted records units evicted for a preemptor.
func (r *Recorder) Evicted(kind, quota string, n int) {
	if r == nil {
		return
	}
	r.Preemptions.WithLabelValues(kind, quota).Add(float64(n))
}

// AdmissionCheck records an admission check outcome.
func (r *Recorder) AdmissionCheck(check, outcome string) {
	if r == nil {
		return
	}
	r.AdmissionChecks.WithLabelValues(check, outcome).Inc()
}

func (r *Recorder) collectors() []prometheus.Collector {
	return []prometheus.Collector{r.Attempts, r.AlgorithmLatency, r.ComingRate, r.WaitTime, r.Preemptions, r.AdmissionChecks, r.Passes}
}
