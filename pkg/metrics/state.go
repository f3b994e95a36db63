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

// QuotaState is one quota's limits and usage, per resource, in the units
// Prometheus shows (cores for CPU, bytes for memory).
type QuotaState struct {
	Name           string
	Min, Max, Used map[string]float64
}

// QueueState is one queue's pending units.
type QueueState struct {
	Name string
	// Active units will be tried in the next pass; Backoff units wait for an
	// event (capacity freed, a quota or the unit changed).
	Active, Backoff int
}

// Snapshot is the scheduler state the gauges show.
type Snapshot struct {
	Quotas []QuotaState
	Queues []QueueState
	// UsageByNamespace is what admitted units hold, per namespace and resource.
	UsageByNamespace map[string]map[string]float64
	// UnitsByJobType counts units by namespace and job type (consumer kind).
	UnitsByJobType map[[2]string]int
	// Waiting counts the units waiting for admission by queue, quota and
	// reason.
	Waiting map[WaitKey]int
}

// WaitKey is a queue, a quota and a wait reason: the condition reason of
// the unit's QuotaReserved=False (schedtypes.WaitTable), ReasonNotTried or
// ReasonTimeoutBackoff. The reasons are a fixed set, never free text.
type WaitKey struct {
	Queue, Quota, Reason string
}

// MetricPendingByReason counts the waiting units by reason, so an alert can
// say how many wait on NoNodeFits.
const MetricPendingByReason = "koord_queue_pending_units_by_reason"

// Wait reasons of koord_queue_pending_units_by_reason that are not
// condition reasons.
const (
	// ReasonNotTried: pending, but not refused by a pass yet.
	ReasonNotTried = "NotTried"
	// ReasonTimeoutBackoff: phase TimeoutBackoff, back in its queue when the
	// backoff ends.
	ReasonTimeoutBackoff = "TimeoutBackoff"
)

// State gives a consistent snapshot at scrape time. Only the leader's
// snapshot holds anything, so a sum over replicas counts each unit once.
type State interface {
	MetricsSnapshot() Snapshot
}

var (
	descUsageByQuota = prometheus.NewDesc("dequeued_quota_usage_by_quota",
		"Quota used by admitted QueueUnits, by quota and resource.", []string{"quota", "resource"}, nil)
	descUsageByNamespace = prometheus.NewDesc("dequeued_quota_usage_by_namespace",
		"Quota used by admitted QueueUnits, by namespace and resource.", []string{"namespace", "resource"}, nil)
	descByJobType = prometheus.NewDesc("queueunits_by_job_type",
		"QueueUnits known, by namespace and job type.", []string{"namespace", "type"}, nil)
	descActive = prometheus.NewDesc("queueunits_in_active_queue",
		"Pending QueueUnits that the next pass will try, by queue.", []string{"queue"}, nil)
	descBackoff = prometheus.NewDesc("queueunits_in_backoff_queue",
		"Pending QueueUnits waiting for capacity or a change before they are tried again, by queue.", []string{"queue"}, nil)
	descPending = prometheus.NewDesc("koord_queue_pending_units",
		"Pending QueueUnits by queue.", []string{"queue"}, nil)
	descByReason = prometheus.NewDesc(MetricPendingByReason,
		"QueueUnits waiting for admission (phase Enqueued, new or TimeoutBackoff) by queue, quota and reason (the reason of their QuotaReserved=False condition).",
		[]string{"queue", "quota", "reason"}, nil)
	descQuotaMin = prometheus.NewDesc("koord_queue_quota_min",
		"ElasticQuota min by quota and resource.", []string{"quota", "resource"}, nil)
	descQuotaMax = prometheus.NewDesc("koord_queue_quota_max",
		"ElasticQuota max by quota and resource.", []string{"quota", "resource"}, nil)
	descQuotaUsed = prometheus.NewDesc("koord_queue_quota_used",
		"ElasticQuota used (admitted units, descendants included) by quota and resource.", []string{"quota", "resource"}, nil)
)

type stateCollector struct{ state State }

func (c stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descUsageByQuota, descUsageByNamespace, descByJobType, descActive, descBackoff,
		descPending, descByReason, descQuotaMin, descQuotaMax, descQuotaUsed} {
		ch <- d
	}
}

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.state.MetricsSnapshot()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, q := range s.Quotas {
		for r, v := range q.Used {
			gauge(descUsageByQuota, v, q.Name, r)
			gauge(descQuotaUsed, v, q.Name, r)
		}
		for r, v := range q.Min {
			gauge(descQuotaMin, v, q.Name, r)
		}
		for r, v := range q.Max {
			gauge(descQuotaMax, v, q.Name, r)
		}
	}
	for ns, byRes := range s.UsageByNamespace {
		for r, v := range byRes {
			gauge(descUsageByNamespace, v, ns, r)
		}
	}
	for k, n := range s.UnitsByJobType {
		gauge(descByJobType, float64(n), k[0], k[1])
	}
	for _, q := range s.Queues {
		gauge(descActive, float64(q.Active), q.Name)
		gauge(descBackoff, float64(q.Backoff), q.Name)
		gauge(descPending, float64(q.Active+q.Backoff), q.Name)
	}
	for k, n := range s.Waiting {
		gauge(descByReason, float64(n), k.Queue, k.Quota, k.Reason)
	}
}

// Register exposes the recorder's metrics, the state gauges and
// koord_queue_build_info on reg.
func Register(reg prometheus.Registerer, r *Recorder, state State) error {
	for _, c := range r.collectors() {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	if err := reg.Register(stateCollector{state: state}); err != nil {
		return err
	}
	return RegisterBuildInfo(reg)
}

// Names lists every metric name this package defines, for checks such as the
// dashboard test.
func Names() []string {
	return []string{
		"job_schedule_attempts", "job_scheduling_algorithm_latency", "queueunits_coming_rate_by_job_type",
		"koord_queue_admission_wait_seconds", "koord_queue_evictions_total", "koord_queue_admission_check_outcomes_total",
		"koord_queue_scheduling_passes_total", "dequeued_quota_usage_by_quota", "dequeued_quota_usage_by_namespace",
		"queueunits_by_job_type", "queueunits_in_active_queue", "queueunits_in_backoff_queue", "koord_queue_pending_units",
		MetricPendingByReason, "koord_queue_quota_min", "koord_queue_quota_max", "koord_queue_quota_used", BuildInfoName,
	}
}
