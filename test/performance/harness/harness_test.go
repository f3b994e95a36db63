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
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

func TestIdealMakespan(t *testing.T) {
	cfg, err := LoadConfig("../configs/baseline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Units(); got != 15000 {
		t.Errorf("baseline has %d units, want 15000", got)
	}
	// Per child: 350*1*0.2 + 100*5*0.5 + 50*20*1 = 1320 CPU-s; 6 children
	// under a 120-CPU parent: 66 s. Arrival: 49*1.2 + 1 = 59.8 s.
	got := cfg.IdealMakespan()
	want := Ideal{Seconds: 66, WorkBound: 66, ArrivalBound: 59.8, Formula: got.Formula}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })); diff != "" {
		t.Errorf("ideal (-want +got):\n%s", diff)
	}
	large, err := LoadConfig("../configs/large.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := large.Units(); got != 50000 {
		t.Errorf("large has %d units, want 50000", got)
	}
}

func TestParseProm(t *testing.T) {
	text := `# HELP rest_client_requests_total Number of HTTP requests
# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="GET"} 12
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="PATCH"} 30
rest_client_requests_total{code="409",host="127.0.0.1:6443",method="PATCH"} 2
rest_client_requests_total{code="201",host="127.0.0.1:6443",method="POST"} 5
koord_queue_scheduling_passes_total 7
weird{a="x\"y,z",b="2"} 1.5e+00 1700000000
`
	samples, err := parseProm(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	c := requestCounts(samples)
	if diff := cmp.Diff(map[string]float64{"GET": 12, "PATCH": 32, "POST": 5}, c.byMethod); diff != "" {
		t.Errorf("by method (-want +got):\n%s", diff)
	}
	if got := c.writes(); got != 37 {
		t.Errorf("writes = %v, want 37", got)
	}
	if v, ok := counterSum(samples, PassesMetric); !ok || v != 7 {
		t.Errorf("passes = %v, %v", v, ok)
	}
	if got := samples[len(samples)-1]; got.labels["a"] != `x"y,z` || got.labels["b"] != "2" || got.value != 1.5 {
		t.Errorf("last sample = %+v", got)
	}
}

func TestCheck(t *testing.T) {
	summary := []byte("wallToIdealRatio: 1.4\nutilization:\n  overall: 0.9\nquota:\n  violations: 0\ntimedOut: false\n")
	figs, err := Figures(summary)
	if err != nil {
		t.Fatal(err)
	}
	f := func(v float64) *float64 { return &v }
	r := &Ranges{Figures: map[string]Range{
		"wallToIdealRatio":    {Max: f(1.3), Why: "target"},
		"utilization.overall": {Min: f(0.85)},
		"quota.violations":    {Max: f(0)},
		"timedOut":            {Max: f(0)},
		"api.writes":          {Max: f(2)},
	}}
	want := []string{
		"api.writes: missing from the summary",
		"wallToIdealRatio = 1.4, above the maximum 1.3 (target)",
	}
	if diff := cmp.Diff(want, Check(figs, r)); diff != "" {
		t.Errorf("check (-want +got):\n%s", diff)
	}
}

// TestSmallRun runs the small config end to end: a real control plane, the
// real koord-queue binary, a few hundred units. The run must finish, every
// figure of the small range file must be in the summary and in range, and
// no quota may ever be above its max in the recorded timeline.
func TestSmallRun(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	ctrllog.SetLogger(klog.Background())
	cfg, err := LoadConfig("../configs/small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// Events in pages of 20: a page lost or counted twice shows as events
	// missing (the sanity range holds them at 0) or in excess.
	defer func(n int64) { eventPageSize = n }(eventPageSize)
	eventPageSize = 20
	s, err := Run(ctx, Options{Config: cfg, OutputDir: dir, QPS: 100, Burst: 200, Log: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	if s.TimedOut || s.Completed != s.Units || s.Units != cfg.Units() {
		t.Fatalf("run did not complete: %d/%d units done (config has %d), timed out %v", s.Completed, s.Units, cfg.Units(), s.TimedOut)
	}
	if s.Quota.Violations > 0 {
		t.Errorf("quota above max in the timeline: %v", s.Quota.Details)
	}
	if n := s.Events.Scheduled; n < s.Admissions || s.Admissions <= 40 {
		t.Errorf("%d Scheduled events counted in pages of 20 for %d admissions", n, s.Admissions)
	}
	if c := s.CPU; c.Note != "" || c.APIServerSeconds <= 0 || c.EtcdSeconds <= 0 || c.KoordQueueSeconds <= 0 || c.APIBoundSeconds <= 0 {
		t.Errorf("CPU figures incomplete: %+v", c)
	}
	data, err := os.ReadFile(filepath.Join(dir, "summary.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	figs, err := Figures(data)
	if err != nil {
		t.Fatal(err)
	}
	r, err := LoadRanges("../sanity/small.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range Check(figs, r) {
		t.Error(bad)
	}
	for _, f := range []string{"units.csv", "intervals.csv", "koord-queue.log"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	if t.Failed() {
		t.Logf("summary:\n%s", data)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func TestSchedulerConfigFile(t *testing.T) {
	cfg, err := LoadConfig("../configs/baseline-no-preemption.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := "apiVersion: scheduling.k8s.io/v1\nkind: KoordQueueConfiguration\nreclaimProtectionPeriod: 0s\nenablePreemption: false\nenableReclaim: false\n"
	if diff := cmp.Diff(want, cfg.SchedulerConfig()); diff != "" {
		t.Errorf("config file (-want +got):\n%s", diff)
	}
	if got := cfg.Units(); got != 15000 {
		t.Errorf("units = %d, want 15000", got)
	}
}
