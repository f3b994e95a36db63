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

// Package dashboard checks the Grafana dashboard shipped in config/grafana:
// every metric a panel or a variable queries must be one koord-queue
// exports, with the labels it matches, groups by and shows.
package dashboard

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	clientmetrics "k8s.io/client-go/tools/metrics"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/koordinator-sh/koord-queue/pkg/metrics"
)

// dashboard is the part of a Grafana dashboard the checks read.
type dashboard struct {
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type variable struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Query string `json:"query"`
}

type panel struct {
	Title      string `json:"title"`
	Type       string `json:"type"`
	Repeat     string `json:"repeat"`
	Datasource *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		Expr         string `json:"expr"`
		LegendFormat string `json:"legendFormat"`
	} `json:"targets"`
	// Panels are a row's.
	Panels []panel `json:"panels"`
}

func TestEveryPanelQueriesAnExportedMetric(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "config", "grafana", "koord-queue.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("dashboard is not JSON: %v", err)
	}
	if len(d.Panels) == 0 {
		t.Fatal("dashboard has no panels")
	}
	for _, p := range check(d, exported(t)) {
		t.Error(p)
	}
	for _, name := range []string{"quota", "namespace", "resource"} {
		if !slices.ContainsFunc(d.Templating.List, func(v variable) bool { return v.Name == name }) {
			t.Errorf("no variable %s", name)
		}
	}
}

// The checks find what is wrong with a dashboard.
func TestCheckFindsMistakes(t *testing.T) {
	labels := map[string][]string{
		"koord_queue_quota_max":                   {"quota", "resource"},
		"koord_queue_pending_units_by_reason":     {"queue", "quota", "reason"},
		"job_scheduling_algorithm_latency_bucket": {"le"},
	}
	vars := []variable{{Name: "quota", Type: "query", Query: "label_values(koord_queue_quota_max, quota)"}}
	for _, tc := range []struct {
		name, expr, legend, title string
		vars                      []variable
		want                      string
	}{
		{name: "fine", expr: `sum by (reason) (koord_queue_pending_units_by_reason{quota=~"$quota"})`, legend: "{{reason}}"},
		{name: "histogram", expr: `histogram_quantile(0.99, sum by (le) (rate(job_scheduling_algorithm_latency_bucket[5m])))`},
		{name: "unknown metric", expr: `sum(koord_queue_nothing)`, want: "koord_queue_nothing, which koord-queue does not export"},
		{name: "unknown matcher label", expr: `koord_queue_quota_max{resourec="cpu"}`, want: `matches label resourec`},
		{name: "unknown grouping label", expr: `sum by (queue) (koord_queue_quota_max)`, want: "groups by label queue"},
		{name: "legend label dropped", expr: `sum by (reason) (koord_queue_pending_units_by_reason)`, legend: "{{queue}}", want: "shows label queue"},
		{name: "undefined variable", expr: `koord_queue_quota_max{quota=~"$team"}`, want: "variable $team, which is not defined"},
		{name: "undefined variable in a title", expr: `koord_queue_quota_max`, title: "${team}", want: "variable $team, which is not defined"},
		{name: "variable of no metric", expr: `koord_queue_quota_max{quota=~"$quota"}`,
			vars: []variable{{Name: "ns", Type: "query", Query: "label_values(koord_queue_quota_max, namespace)"}}, want: "variable ns queries label namespace"},
		{name: "variable not used", expr: `koord_queue_quota_max`, title: "plain", want: "variable quota is not used"},
		{name: "no metric", expr: `vector(0)`, want: "no metric"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			title := tc.title
			if title == "" {
				title = "Units of $quota"
			}
			p := panel{Title: title, Type: "timeseries", Datasource: &struct {
				UID string `json:"uid"`
			}{UID: "${datasource}"}}
			p.Targets = append(p.Targets, struct {
				Expr         string `json:"expr"`
				LegendFormat string `json:"legendFormat"`
			}{tc.expr, tc.legend})
			var d dashboard
			d.Templating.List = append([]variable{{Name: "datasource", Type: "datasource"}}, vars...)
			d.Templating.List = append(d.Templating.List, tc.vars...)
			d.Panels = []panel{p}
			got := check(d, labels)
			if tc.want == "" {
				if len(got) > 0 {
					t.Errorf("problems %q, want none", got)
				}
				return
			}
			if !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, tc.want) }) {
				t.Errorf("problems %q, want one saying %q", got, tc.want)
			}
		})
	}
}

// exported gathers what koord-queue exports: each metric (a histogram's
// series too) with its labels. The state gauges come from a snapshot with
// one of everything; client-go's requests from controller-runtime's registry,
// the scheduler's default one.
func exported(t *testing.T) map[string][]string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	r := metrics.NewRecorder()
	if err := metrics.Register(reg, r, fullState{}); err != nil {
		t.Fatal(err)
	}
	r.Pass(time.Millisecond)
	r.Attempt("team-a", metrics.ResultAdmitted)
	r.Coming("default", "Job", metrics.StatusCreated)
	r.Admitted("team-a", time.Second)
	r.Evicted("preemption", "team-a", 1)
	r.AdmissionCheck("prov-req-check", "Ready")
	clientmetrics.RequestResult.Increment(t.Context(), "200", "GET", "127.0.0.1")
	out := map[string][]string{}
	for _, g := range []prometheus.Gatherer{reg, ctrlmetrics.Registry} {
		families, err := g.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			var labels []string
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if !slices.Contains(labels, l.GetName()) {
						labels = append(labels, l.GetName())
					}
				}
			}
			out[f.GetName()] = labels
			if f.GetType() == dto.MetricType_HISTOGRAM {
				out[f.GetName()+"_bucket"] = append(slices.Clone(labels), "le")
				out[f.GetName()+"_count"] = labels
				out[f.GetName()+"_sum"] = labels
			}
		}
	}
	for _, name := range append(metrics.Names(), "rest_client_requests_total") {
		if _, ok := out[name]; !ok {
			t.Fatalf("%s has no series here: give fullState or the recorder calls above what it needs", name)
		}
	}
	return out
}

// fullState has one of every kind of state gauge.
type fullState struct{}

func (fullState) MetricsSnapshot() metrics.Snapshot {
	one := map[string]float64{"cpu": 1}
	return metrics.Snapshot{
		Quotas:           []metrics.QuotaState{{Name: "team-a", Min: one, Max: one, Used: one}},
		Queues:           []metrics.QueueState{{Name: "team-a", Active: 1, Backoff: 1}},
		UsageByNamespace: map[string]map[string]float64{"default": one},
		UnitsByJobType:   map[[2]string]int{{"default", "Job"}: 1},
		Waiting:          map[metrics.WaitKey]int{{Queue: "team-a", Quota: "team-a", Reason: "NoNodeFits"}: 1},
	}
}
