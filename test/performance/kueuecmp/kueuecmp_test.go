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

package kueuecmp

import (
	"archive/tar"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/koordinator-sh/koord-queue/test/performance/harness"
)

func TestTranslateBaseline(t *testing.T) {
	cfg, err := harness.LoadConfig("../configs/baseline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Translate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Kueue's baseline generator.yaml, written out by hand.
	want := &Generator{Cohorts: []CohortSet{{ClassName: "cohort", Count: 5, QueuesSets: []QueuesSet{{
		ClassName: "cq", Count: 6, NominalQuota: "20", BorrowingLimit: "100", ReclaimWithinCohort: "Any", WithinClusterQueue: "LowerPriority",
		WorkloadsSets: []WorkloadsSet{
			{Count: 350, CreationIntervalMs: 100, Workloads: []Workload{{ClassName: "small", RuntimeMs: 200, Priority: 50, Request: "1"}}},
			{Count: 100, CreationIntervalMs: 500, Workloads: []Workload{{ClassName: "medium", RuntimeMs: 500, Priority: 100, Request: "5"}}},
			{Count: 50, CreationIntervalMs: 1200, Workloads: []Workload{{ClassName: "large", RuntimeMs: 1000, Priority: 200, Request: "20"}}},
		},
	}}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("translation (-want +got):\n%s", diff)
	}
	// Kueue writes quantities as bare numbers; they read back equal.
	path := filepath.Join(t.TempDir(), "generator.yaml")
	text := `cohorts:
  - className: cohort
    count: 5
    queuesSets:
    - className: cq
      count: 6
      nominalQuota: 20
      borrowingLimit: 100
      reclaimWithinCohort: Any
      withinClusterQueue: LowerPriority
      workloadsSets:
      - count: 350
        creationIntervalMs: 100
        workloads:
        - {className: small, runtimeMs: 200, priority: 50, request: 1}
      - count: 100
        creationIntervalMs: 500
        workloads:
        - {className: medium, runtimeMs: 500, priority: 100, request: 5}
      - count: 50
        creationIntervalMs: 1200
        workloads:
        - {className: large, runtimeMs: 1000, priority: 200, request: 20}
`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	shipped, err := LoadGenerator(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Same(got, shipped); err != nil {
		t.Error(err)
	}
	shipped.Cohorts[0].Count = 4
	if err := Same(got, shipped); err == nil {
		t.Error("a different cohort count compared equal")
	}
}

func TestTranslateLargeScaleAndRejects(t *testing.T) {
	cfg, err := harness.LoadConfig("../configs/kueue-large-scale.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Units(); got != 60000 {
		t.Errorf("large-scale has %d units, want 20 x 100 x 30 = 60000", got)
	}
	g, err := Translate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	q := g.Cohorts[0].QueuesSets[0]
	if g.Cohorts[0].Count != 20 || q.Count != 100 || q.NominalQuota != "20" || q.BorrowingLimit != "100" {
		t.Errorf("large-scale translates to %d cohorts x %d queues, nominal %s, borrowing %s", g.Cohorts[0].Count, q.Count, q.NominalQuota, q.BorrowingLimit)
	}
	noHold := *cfg
	noHold.HoldRoomForHigherPriority = false
	if _, err := Translate(&noHold); err == nil || !strings.Contains(err.Error(), "holdRoomForHigherPriority") {
		t.Errorf("a config that holds no room for higher priority: error %v", err)
	}
	cfg.Parents.Max = cfg.Children.Max
	if _, err := Translate(cfg); err == nil || !strings.Contains(err.Error(), "parents.max") {
		t.Errorf("a parent max other than the children's min sum: error %v", err)
	}
}

func TestTranslateThousandQueues(t *testing.T) {
	cfg, err := harness.LoadConfig("../configs/kueue-1000-queues.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Units(); got != 10000 {
		t.Errorf("1000-queues has %d units, want 10 x 100 x (7 + 2 + 1) = 10000", got)
	}
	g, err := Translate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	q := g.Cohorts[0].QueuesSets[0]
	if g.Cohorts[0].Count != 10 || q.Count != 100 || q.NominalQuota != "2" || q.BorrowingLimit != "98" {
		t.Errorf("1000-queues translates to %d cohorts x %d queues, nominal %s, borrowing %s; want 10 x 100, 2 and 98", g.Cohorts[0].Count, q.Count, q.NominalQuota, q.BorrowingLimit)
	}
	// Creations a second over all queues, each class one per interval in
	// every queue: 1000/10 + 1000/30 + 1000/60 = 150.
	var perSecond float64
	for _, set := range q.WorkloadsSets {
		perSecond += float64(q.Count*g.Cohorts[0].Count) * 1000 / float64(set.CreationIntervalMs)
	}
	if perSecond > 200 {
		t.Errorf("1000-queues creates %.0f units a second, more than the 200 the pair is meant to stay under", perSecond)
	}
	if _, ok := Pairs["1000-queues"]; !ok {
		t.Error("make perf-compare knows no pair 1000-queues")
	}
}

func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadKueue(t *testing.T) {
	dir := t.TempDir()
	writeKueueRun(t, dir)
	got, err := ReadKueue(dir, []string{"small", "large"}, 120000, 10)
	if err != nil {
		t.Fatal(err)
	}
	// Admissions: a 1, b 1+1, c 1+2, d (unfinished) 1 = 7; evictions 4.
	want := Figures{
		Units: 4, Completed: 3, WallSeconds: 20, WallToIdeal: 2, Admissions: 7, AdmissionsPerSecond: 0.35,
		TimeToAdmission: map[string]harness.KueueWait{
			"small": {Count: 2, AvgMs: 200, P50Ms: 100, P95Ms: 300, MaxMs: 300},
			"large": {Count: 2, AvgMs: 1000, P50Ms: 0, P95Ms: 2000, MaxMs: 2000},
		},
		CPUSeconds: 4, PeakRSSMiB: 200, RusagePeakRSSMiB: 200,
		WritesPerAdmission: map[string]float64{"PATCH": 2, "POST": 1, "total": 3},
		QuotaViolations:    1, Evictions: 4,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("figures (-want +got):\n%s", diff)
	}
	// With minimalkueue's VmHWM sampled, that is its peak RSS.
	writeFile(t, dir, sampledRSSFile, `{"peakRSSMiB": 150.04, "samples": 30}`)
	if got, err = ReadKueue(dir, []string{"small", "large"}, 120000, 10); err != nil {
		t.Fatal(err)
	}
	if got.PeakRSSMiB != 150 || got.RusagePeakRSSMiB != 200 {
		t.Errorf("peak RSS %v, by rusage %v; want 150 (sampled), 200", got.PeakRSSMiB, got.RusagePeakRSSMiB)
	}
	writeFile(t, dir, "wlStates.csv", "id,class name\n0,small\n")
	if _, err := ReadKueue(dir, nil, 1, 1); err == nil || !strings.Contains(err.Error(), "ms to admitted") {
		t.Errorf("a CSV without its columns: error %v", err)
	}
}

// writeKueueRun writes the outputs of a small Kueue run into dir.
func writeKueueRun(t *testing.T, dir string) {
	t.Helper()
	writeFile(t, dir, "minimalkueue.stats.yaml", "wallMs: 20000\nuserMs: 3000\nsysMs: 1000\nmaxrss: 204800\n")
	writeFile(t, dir, "wlStates.csv", `id,class name,namespace,name,ms to admitted,ms to finish,num evictions
0,small,ns,a,100,400,0
1,small,ns,b,300,900,1
2,large,ns,c,2000,3000,2
3,large,ns,d,0,0,1
`)
	writeFile(t, dir, "cqStates.csv", `name,cohort,class name,CPU quota (mCPU),CPU used (mCPU * ms),CPU max usage (mCPU),monitor time (ms)
cq-a,cohort-0,cq,20000,1,120000,10
cq-b,cohort-0,cq,20000,1,121000,10
`)
	f, err := os.Create(filepath.Join(dir, "metricsDump.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for name, body := range map[string]string{
		// The later scrape wins whatever the order in the tarball.
		"2000.prometheus": `rest_client_requests_total{code="200",method="PATCH"} 14` + "\n" + `rest_client_requests_total{code="201",method="POST"} 7` + "\n" + `rest_client_requests_total{code="200",method="GET"} 50` + "\n",
		"1000.prometheus": `rest_client_requests_total{code="200",method="PATCH"} 1` + "\n",
	} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Size: int64(len(body)), Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []interface{ Close() error }{tw, gz, f} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBuildTable(t *testing.T) {
	k := func(wall float64, avgSmall int64, patch float64) Figures {
		return Figures{Completed: 10, WallSeconds: wall, TimeToAdmission: map[string]harness.KueueWait{"small": {AvgMs: avgSmall}},
			WritesPerAdmission: map[string]float64{"PATCH": patch, "total": patch}}
	}
	ours := func(wall float64, avgSmall int64, post, bound float64) Figures {
		return Figures{Completed: 10, WallSeconds: wall, TimeToAdmission: map[string]harness.KueueWait{"small": {AvgMs: avgSmall}},
			WritesPerAdmission: map[string]float64{"POST": post, "total": post}, APIBoundSeconds: bound, WallToAPIBound: wall / bound}
	}
	tab := Build("test", []string{"small"}, []Figures{k(400, 2000, 3), k(410, 3000, 5)}, []Figures{ours(200, 500, 1, 100), ours(190, 1500, 2, 150)})
	row := func(name string) Row {
		for _, r := range tab.Rows {
			if r.Figure == name {
				return r
			}
		}
		t.Fatalf("no row %q", name)
		return Row{}
	}
	ratio := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name string
		want Row
	}{
		// (400+410)/2 = 405, (200+190)/2 = 195, 195/405 = 0.4815; round by
		// round 200/400 and 190/410 = 0.4634.
		{"wall time (s)", Row{Figure: "wall time (s)", Kueue: 405, Ours: 195, Ratio: ratio(0.48), KRuns: []float64{400, 410}, ORuns: []float64{200, 190}, RoundRatios: []float64{0.5, 0.46}}},
		// 2.5 s vs 1 s; 0.5/2 and 1.5/3.
		{"time to admission avg, small (s)", Row{Figure: "time to admission avg, small (s)", Kueue: 2.5, Ours: 1, Ratio: ratio(0.4), KRuns: []float64{2, 3}, ORuns: []float64{0.5, 1.5}, RoundRatios: []float64{0.25, 0.5}}},
		// A method only one side uses is 0 on the other; no ratio over 0.
		{"API writes / admission, POST", Row{Figure: "API writes / admission, POST", Kueue: 0, Ours: 1.5, KRuns: []float64{0, 0}, ORuns: []float64{1, 2}}},
		{"API writes / admission, PATCH", Row{Figure: "API writes / admission, PATCH", Kueue: 4, Ours: 0, Ratio: ratio(0), KRuns: []float64{3, 5}, ORuns: []float64{0, 0}, RoundRatios: []float64{0, 0}}},
		{"completed units", Row{Figure: "completed units", Kueue: 10, Ours: 10, Ratio: ratio(1), KRuns: []float64{10, 10}, ORuns: []float64{10, 10}, RoundRatios: []float64{1, 1}}},
		// Kueue's runs are held to the mean bound of ours, (100+150)/2 =
		// 125 s: 400/125 = 3.2, 410/125 = 3.28; ours 200/100 = 2, 190/150.
		{"wall / API bound", Row{Figure: "wall / API bound", Kueue: 3.24, Ours: 1.633, Ratio: ratio(0.5), KRuns: []float64{3.2, 3.28}, ORuns: []float64{2, 190.0 / 150}, RoundRatios: []float64{0.63, 0.39}}},
	} {
		if diff := cmp.Diff(c.want, row(c.name)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
	if tab.Kueue[0].APIBoundSeconds != 125 || len(tab.Kueue) != 2 {
		t.Errorf("Kueue's first run has API bound %v, want our runs' mean 125", tab.Kueue[0].APIBoundSeconds)
	}
	if none := Build("test", nil, []Figures{k(400, 2000, 3)}, []Figures{{WallSeconds: 200}}); slices.ContainsFunc(none.Rows, func(r Row) bool { return r.Figure == "wall / API bound" }) {
		t.Error("a table whose runs of ours have no API bound shows a wall / API bound row")
	}
	md := tab.Markdown()
	for _, line := range []string{
		"| wall time (s) | 405 | 195 | 0.48 | 0.46 to 0.5 | 400 / 410 | 200 / 190 |",
		"| API writes / admission, POST | 0 | 1.5 | - | - | 0 / 0 | 1 / 2 |",
		"| completed units | 10 | 10 | 1 | 1 | 10 / 10 | 10 / 10 |",
	} {
		if !strings.Contains(md, line) {
			t.Errorf("markdown lacks %q:\n%s", line, md)
		}
	}
}

func TestTabulate(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "kueue-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeKueueRun(t, filepath.Join(dir, "kueue-1"))
	// Ours: 5 s from start to exit, 7 admissions, 14 PATCH and 7 POST.
	s := harness.Summary{Config: "smoke", Units: 4, Completed: 4, Ideal: harness.Ideal{Seconds: 10}, Kueue: &harness.KueueFigures{
		WallSeconds: 5, Admissions: 7, UserCPUSeconds: 1.5, SystemCPUSeconds: 0.5, MaxRSSMiB: 50,
		WritesByMethod: map[string]float64{"PATCH": 14, "POST": 7},
	}}
	data, err := yaml.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "ours-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "ours-1"), "summary.yaml", string(data))
	tab, err := Tabulate("smoke", dir)
	if err != nil {
		t.Fatal(err)
	}
	md := tab.Markdown()
	// Kueue's fixture: 20 s; ours 5 s; 0.25. CPU 4 s vs 2 s.
	for _, line := range []string{"| wall time (s) | 20 | 5 | 0.25 | 0.25 | 20 | 5 |", "| scheduler CPU (s) | 4 | 2 | 0.5 | 0.5 | 4 | 2 |", "| API writes / admission, total | 3 | 3 | 1 | 1 | 3 | 3 |"} {
		if !strings.Contains(md, line) {
			t.Errorf("table lacks %q:\n%s", line, md)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "compare.md")); err != nil {
		t.Error(err)
	}
	if _, err := Tabulate("smoke", t.TempDir()); err == nil {
		t.Error("an empty folder gave a table")
	}
}
