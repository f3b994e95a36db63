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
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// TestCompareSmoke runs the whole comparison once on the tiny config: Kueue's
// runner with minimalkueue, then our harness in Kueue mode, and checks the
// table. Skipped when Kueue's harness cannot be fetched or built here.
func TestCompareSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the comparison starts two control planes")
	}
	ctrllog.SetLogger(klog.Background())
	// Limits other than minimalkueue's own, so its patched copy is built
	// and run (WithClientLimits).
	const qps, burst = 60, 120
	// Building Kueue's binaries takes minutes on a cold cache and as long
	// as it takes on a busy machine: it is bounded by go test's -timeout
	// only, and the comparison below finds them built.
	k, err := Prepare(t.Context(), DefaultVersion, os.Stderr)
	if err != nil {
		t.Skipf("Kueue's harness (%s@%s) is not available here, so the comparison cannot run: %v", Module, DefaultVersion, err)
	}
	if _, err := k.WithClientLimits(t.Context(), qps, burst, os.Stderr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	out := t.TempDir()
	began := time.Now()
	tab, err := Compare(ctx, Options{Pair: "smoke", Runs: 1, QPS: qps, Burst: burst, Output: out, Log: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("comparison took %s:\n%s", time.Since(began).Round(time.Second), tab.Markdown())
	if len(tab.Kueue) != 1 || len(tab.Ours) != 1 {
		t.Fatalf("runs: %d Kueue, %d ours; want 1 each", len(tab.Kueue), len(tab.Ours))
	}
	// 1 parent x 2 children x (10 + 4 + 2) units.
	for side, f := range map[string]Figures{"Kueue": tab.Kueue[0], "ours": tab.Ours[0]} {
		if f.Units != 32 || f.Completed != 32 {
			t.Errorf("%s: %d of %d units completed, want 32 of 32", side, f.Completed, f.Units)
		}
		if f.WallSeconds <= 0 || f.CPUSeconds <= 0 || f.PeakRSSMiB <= 0 || f.WritesPerAdmission["total"] <= 0 {
			t.Errorf("%s: figures missing: %+v", side, f)
		}
		// Each side's peak is sampled (VmHWM until the scheduler exited),
		// beside the rusage figure, which counts its parent's peak too.
		if f.RusagePeakRSSMiB <= 0 {
			t.Errorf("%s: no peak RSS by rusage beside the sampled %v MiB", side, f.PeakRSSMiB)
		}
		if f.Admissions < 32 {
			t.Errorf("%s: %d admissions for 32 completed units", side, f.Admissions)
		}
		for _, c := range []string{"small", "medium", "large"} {
			if w := f.TimeToAdmission[c]; w.Count == 0 {
				t.Errorf("%s: no time to admission for class %s", side, c)
			}
		}
	}
	if v := tab.Ours[0].QuotaViolations; v != 0 {
		t.Errorf("ours: %d quota violations", v)
	}
	// minimalkueue says which limits it runs with.
	logs, err := filepath.Glob(filepath.Join(out, "kueue-1", "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	var said string
	for _, l := range logs {
		data, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "K8S Client") {
				said = line
			}
		}
	}
	if !strings.Contains(said, "60") || !strings.Contains(said, "120") {
		t.Errorf("minimalkueue's client limits line %q (in %v), want QPS 60 and burst 120", said, logs)
	}
	if !strings.Contains(strings.Join(tab.Notes, " "), "kubeConfig.QPS = 60") {
		t.Errorf("the table's notes do not say how minimalkueue was patched: %q", tab.Notes)
	}
	for _, name := range []string{"compare.md", "compare.yaml", "compare.json", "kueue-generator.yaml", "kueue-1/wlStates.csv", "kueue-1/" + sampledRSSFile, "ours-1/summary.yaml"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
}
