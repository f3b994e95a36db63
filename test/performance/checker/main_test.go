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

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/koordinator-sh/koord-queue/test/performance/harness"
)

// repoRoot is where range files name their calibration runs from.
const repoRoot = "../../.."

func check(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errs bytes.Buffer
	code := run(args, &out, &errs)
	t.Logf("checker %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errs.String())
	return code, out.String()
}

func figures(t *testing.T, path string) map[string]float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := harness.Figures(data)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The recorded runs: the small config as it runs today, and the same
// config with koord-queue's client throttled to 20 requests/s (the runner's
// --qps 20 --burst 20), a regression recorded, not made up.
const (
	goodRun      = "testdata/small-good.yaml"
	regressedRun = "testdata/small-throttled.yaml"
	smallRanges  = "../ranges/small.yaml"
)

func TestPerfCheckPassesOnAGoodRun(t *testing.T) {
	if code, _ := check(t, "--summary", goodRun, "--ranges", smallRanges); code != 0 {
		t.Errorf("exit %d on the recorded good run, want 0", code)
	}
}

// TestPerfCheckFailsOnARegressedRun: the checker exits 1, and every figure
// it names is one the regressed run did worse on than the good run.
func TestPerfCheckFailsOnARegressedRun(t *testing.T) {
	code, out := check(t, "--summary", regressedRun, "--ranges", smallRanges)
	if code != 1 {
		t.Fatalf("exit %d on the recorded regressed run, want 1", code)
	}
	r, err := harness.LoadRanges(smallRanges)
	if err != nil {
		t.Fatal(err)
	}
	good, bad := figures(t, goodRun), figures(t, regressedRun)
	var named []string
	for line := range strings.Lines(out) {
		rest, ok := strings.CutPrefix(line, "OUT OF RANGE: ")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, " ")
		name = strings.TrimSuffix(name, ":")
		named = append(named, name)
		rg, ok := r.Figures[name]
		switch {
		case !ok:
			t.Errorf("%s is named but not in %s", name, smallRanges)
		case rg.Max != nil && !(bad[name] > good[name]):
			t.Errorf("%s named as too high, yet %v is not above the good run's %v", name, bad[name], good[name])
		case rg.Min != nil && rg.Max == nil && !(bad[name] < good[name]):
			t.Errorf("%s named as too low, yet %v is not below the good run's %v", name, bad[name], good[name])
		}
	}
	if len(named) == 0 {
		t.Fatalf("exit 1 but no figure named:\n%s", out)
	}
}

// TestRangesHoldOnTheirCalibrationRuns: each range file that names the run
// it was calibrated from passes on that run, and every figure it bounds is
// in it (no misspelt path).
func TestRangesHoldOnTheirCalibrationRuns(t *testing.T) {
	files, err := filepath.Glob("../ranges/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no range files: %v", err)
	}
	sourced := 0
	for _, f := range files {
		r, err := harness.LoadRanges(f)
		if err != nil {
			t.Fatal(err)
		}
		sources := r.Sources
		if r.Source != "" {
			sources = append(sources, r.Source)
		}
		for _, source := range sources {
			sourced++
			src := filepath.Join(repoRoot, source)
			if code, _ := check(t, "--summary", src, "--ranges", f); code != 0 {
				t.Errorf("%s fails on its own calibration run %s", f, source)
			}
		}
	}
	if sourced == 0 {
		t.Error("no range file names the run it was calibrated from")
	}
}

// TestCalibrateThenCheck: ranges calibrated from the good run pass it and
// stop the regressed one.
func TestCalibrateThenCheck(t *testing.T) {
	code, out := check(t, "--calibrate", "--min-runs", "1", "--summary", goodRun)
	if code != 0 {
		t.Fatalf("calibrate: exit %d", code)
	}
	path := filepath.Join(t.TempDir(), "ranges.yaml")
	if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := harness.LoadRanges(path)
	if err != nil {
		t.Fatal(err)
	}
	good := figures(t, goodRun)
	for name, rg := range r.Figures {
		v := good[name]
		if rg.Max != nil && v > 0 && *rg.Max < v*1.2 {
			t.Errorf("%s: max %v leaves less than 20 %% above the measured %v", name, *rg.Max, v)
		}
	}
	if code, _ := check(t, "--summary", goodRun, "--ranges", path); code != 0 {
		t.Errorf("exit %d on the run the ranges come from", code)
	}
	if code, _ := check(t, "--summary", regressedRun, "--ranges", path); code != 1 {
		t.Errorf("exit %d on the regressed run, want 1", code)
	}
}

func TestBadUsage(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"--summary", goodRun},
		{"--summary", goodRun, "--ranges", smallRanges, "--calibrate"},
		{"--summary", "testdata/none.yaml", "--ranges", smallRanges},
		{"--summary", goodRun, "--calibrate", "--margin", "2", "--min-runs", "1"},
		// One run tells no spread.
		{"--summary", goodRun, "--calibrate"},
		{"--summary", goodRun, "--ranges", smallRanges, regressedRun},
	} {
		if code, _ := check(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// setFigure sets the figure at a dotted path of a summary document.
func setFigure(t *testing.T, doc map[string]any, path string, v float64) {
	t.Helper()
	parts := strings.Split(path, ".")
	m := doc
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			t.Fatalf("no %s in the summary", path)
		}
		m = next
	}
	if _, ok := m[parts[len(parts)-1]]; !ok {
		t.Fatalf("no %s in the summary", path)
	}
	m[parts[len(parts)-1]] = v
}

// writeRun writes the good run with each gated figure scaled by scale and
// the figures of noisy set as given.
func writeRun(t *testing.T, dir, name string, good map[string]float64, scale float64, noisy map[string]float64, commit string) string {
	t.Helper()
	data, err := os.ReadFile(goodRun)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	calibrated, err := harness.Calibrate(good, goodRun, harness.RegressionMargin)
	if err != nil {
		t.Fatal(err)
	}
	for figure, rg := range calibrated.Figures {
		if rg.Why == "" || strings.HasPrefix(rg.Why, "every") || rg.Min != nil && rg.Max == nil && good[figure] == 1 {
			continue // an invariant
		}
		if v, ok := noisy[figure]; ok {
			setFigure(t, doc, figure, v)
			continue
		}
		setFigure(t, doc, figure, good[figure]*scale)
	}
	doc["setup"].(map[string]any)["commit"] = commit
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Ranges calibrated from three runs of one binary pass each of them, and
// stop a run where any one gated figure is 25 % worse than its mean; a
// figure whose runs spread wider than that is not gated; runs of two
// binaries are refused.
func TestCalibrateFromThreeRuns(t *testing.T) {
	dir := t.TempDir()
	good := figures(t, goodRun)
	const noisyFigure = "wallSeconds"
	w := good[noisyFigure]
	runs := []string{
		writeRun(t, dir, "a.yaml", good, 0.97, map[string]float64{noisyFigure: w * 0.6}, "abc1234"),
		writeRun(t, dir, "b.yaml", good, 1.00, map[string]float64{noisyFigure: w}, "abc1234"),
		writeRun(t, dir, "c.yaml", good, 1.03, map[string]float64{noisyFigure: w * 1.5}, "abc1234"),
	}
	code, out := check(t, append([]string{"--calibrate", "--summary"}, runs...)...)
	if code != 0 {
		t.Fatalf("calibrate: exit %d", code)
	}
	path := filepath.Join(dir, "ranges.yaml")
	if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := harness.LoadRanges(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, gated := r.Figures[noisyFigure]; gated || r.Ungated[noisyFigure] == "" {
		t.Errorf("%s, spread from 0.6 to 1.5 of one run, is gated (%v) or not listed as ungated (%v)", noisyFigure, r.Figures[noisyFigure], r.Ungated)
	}
	if len(r.Sources) != 3 {
		t.Errorf("sources %v, want the three runs", r.Sources)
	}
	for _, run := range runs {
		if code, _ := check(t, "--summary", run, "--ranges", path); code != 0 {
			t.Errorf("exit %d on calibration run %s", code, run)
		}
	}
	data, err := os.ReadFile(runs[1])
	if err != nil {
		t.Fatal(err)
	}
	gated := 0
	for figure, rg := range r.Figures {
		if rg.Max == nil && rg.Min == nil || good[figure] == 0 || strings.HasPrefix(rg.Why, "every") || rg.Max != nil && *rg.Max == 0 || rg.Min != nil && *rg.Min == 1 && rg.Max == nil {
			continue // an invariant
		}
		gated++
		var doc map[string]any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		// The mean run is b: worse by 25 % and a little more.
		worse := good[figure] * 1.26
		if rg.Min != nil {
			worse = good[figure] * 0.74
		}
		setFigure(t, doc, figure, worse)
		b, err := yaml.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		regressed := filepath.Join(dir, "regressed.yaml")
		if err := os.WriteFile(regressed, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if code, out := check(t, "--summary", regressed, "--ranges", path); code != 1 || !strings.Contains(out, figure) {
			t.Errorf("%s 25 %% worse (%v against a mean of %v): exit %d, want 1 naming it", figure, worse, good[figure], code)
		}
	}
	if gated < 5 {
		t.Errorf("only %d figures gated; the good run has more", gated)
	}
	other := writeRun(t, dir, "d.yaml", good, 1, nil, "def5678")
	if code, _ := check(t, "--calibrate", "--summary", runs[0], runs[1], other); code != 2 {
		t.Errorf("calibrating from two binaries: exit %d, want 2", code)
	}
}
