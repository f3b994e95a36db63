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
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

type fakeState struct{ snap Snapshot }

func (f fakeState) MetricsSnapshot() Snapshot { return f.snap }

func TestEveryMetricIsExported(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	r := NewRecorder()
	state := fakeState{Snapshot{
		Quotas:           []QuotaState{{Name: "team-a", Min: map[string]float64{"cpu": 4}, Max: map[string]float64{"cpu": 4}, Used: map[string]float64{"cpu": 2}}},
		Queues:           []QueueState{{Name: "team-a", Active: 1, Backoff: 2}},
		UsageByNamespace: map[string]map[string]float64{"default": {"cpu": 2}},
		UnitsByJobType:   map[[2]string]int{{"default", "Job"}: 3},
		Waiting:          map[WaitKey]int{{Queue: "team-a", Quota: "team-a", Reason: "NoNodeFits"}: 20},
	}}
	if err := Register(reg, r, state); err != nil {
		t.Fatal(err)
	}
	r.Pass(time.Millisecond)
	r.Attempt("team-a", ResultAdmitted)
	r.Coming("default", "Job", StatusCreated)
	r.Admitted("team-a", time.Second)
	r.Evicted("preemption", "team-a", 2)
	r.AdmissionCheck("prov-req-check", "Ready")
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range families {
		got[f.GetName()] = true
	}
	for _, name := range Names() {
		if !got[name] {
			t.Errorf("metric %s not exported", name)
		}
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP queueunits_in_backoff_queue Pending QueueUnits waiting for capacity or a change before they are tried again, by queue.
# TYPE queueunits_in_backoff_queue gauge
queueunits_in_backoff_queue{queue="team-a"} 2
# HELP koord_queue_evictions_total Units evicted to make room, by kind (preemption inside a quota, reclaim across quotas) and quota of the preemptor.
# TYPE koord_queue_evictions_total counter
koord_queue_evictions_total{kind="preemption",quota="team-a"} 2
# HELP koord_queue_pending_units_by_reason QueueUnits waiting for admission (phase Enqueued, new or TimeoutBackoff) by queue, quota and reason (the reason of their QuotaReserved=False condition).
# TYPE koord_queue_pending_units_by_reason gauge
koord_queue_pending_units_by_reason{queue="team-a",quota="team-a",reason="NoNodeFits"} 20
`), "queueunits_in_backoff_queue", "koord_queue_evictions_total", MetricPendingByReason); err != nil {
		t.Error(err)
	}
}

func TestNilRecorderIsSafe(t *testing.T) {
	var r *Recorder
	r.Pass(time.Second)
	r.Attempt("q", ResultAdmitted)
	r.Coming("ns", "Job", StatusCreated)
	r.Admitted("q", time.Second)
	r.Evicted("reclaim", "q", 1)
	r.AdmissionCheck("c", "Ready")
}
