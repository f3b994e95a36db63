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
		if r.Source == "" {
			continue
		}
		sourced++
		src := filepath.Join(repoRoot, r.Source)
		if code, _ := check(t, "--summary", src, "--ranges", f); code != 0 {
			t.Errorf("%s fails on its own calibration run %s", f, r.Source)
		}
	}
	if sourced == 0 {
		t.Error("no range file names the run it was calibrated from")
	}
}

// TestCalibrateThenCheck: ranges calibrated from the good run pass it and
// stop the regressed one.
func TestCalibrateThenCheck(t *testing.T) {
	code, out := check(t, "--calibrate", "--summary", goodRun)
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
		{"--summary", goodRun, "--calibrate", "--margin", "2"},
	} {
		if code, _ := check(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
