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

// Command checker compares a performance run's summary.yaml with a range
// file and exits 1 naming every figure out of range:
//
//	go run ./test/performance/checker --summary DIR/summary.yaml --ranges test/performance/ranges/baseline.yaml
//
// With --calibrate it prints a range file instead, from at least three runs
// of one binary (--min-runs): every regression figure at its mean with 25 %
// of room on its worse side, unless its runs spread wider than that (then
// listed as ungated), and the runs' invariants exactly:
//
//	go run ./test/performance/checker --calibrate --summary A/summary.yaml B/summary.yaml C/summary.yaml > test/performance/ranges/baseline.yaml
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/koordinator-sh/koord-queue/test/performance/harness"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command: 0 all in range (or calibrated), 1 out of range, 2
// bad usage or input.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("checker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	summary := fs.String("summary", "", "Path to a summary.yaml written by the runner.")
	ranges := fs.String("ranges", "", "Path to a range file (test/performance/ranges/*.yaml) or a goal file (test/performance/goals/*.yaml).")
	calibrate := fs.Bool("calibrate", false, "Print a range file calibrated from --summary instead of checking.")
	margin := fs.Float64("margin", harness.RegressionMargin, "With --calibrate: the regression a range allows, as a fraction.")
	minRuns := fs.Int("min-runs", harness.MinCalibrationRuns, "With --calibrate: the fewest runs (--summary and further summaries as arguments) to calibrate from.")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *summary == "" || (*ranges == "") == !*calibrate {
		fmt.Fprintln(stderr, "usage: checker --summary SUMMARY (--ranges RANGES | --calibrate)")
		return 2
	}
	if *calibrate {
		return calibrateRuns(append([]string{*summary}, fs.Args()...), *margin, *minRuns, stdout, stderr)
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: one --summary to check")
		return 2
	}
	data, err := os.ReadFile(*summary)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	figures, err := harness.Figures(data)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", *summary, err)
		return 2
	}
	r, err := harness.LoadRanges(*ranges)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	bad := harness.Check(figures, r)
	for _, b := range bad {
		fmt.Fprintln(stdout, "OUT OF RANGE:", b)
	}
	if len(bad) > 0 {
		return 1
	}
	fmt.Fprintf(stdout, "%d figures of %s within %s\n", len(r.Figures), *summary, *ranges)
	return 0
}

// calibrateRuns prints the range file calibrated from the summaries, runs
// of one binary (harness.CalibrateRuns).
func calibrateRuns(paths []string, margin float64, minRuns int, stdout, stderr io.Writer) int {
	if len(paths) < minRuns {
		fmt.Fprintf(stderr, "calibrate from at least %d runs of one binary (a figure's spread is known only over several); got %d\n", minRuns, len(paths))
		return 2
	}
	runs := make([]harness.Measured, 0, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		figures, err := harness.Figures(data)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", p, err)
			return 2
		}
		var s struct {
			Setup struct {
				Commit string `json:"commit"`
			} `json:"setup"`
		}
		if err := yaml.Unmarshal(data, &s); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", p, err)
			return 2
		}
		runs = append(runs, harness.Measured{Source: p, Commit: s.Setup.Commit, Figures: figures})
	}
	r, err := harness.CalibrateRuns(runs, margin)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	out, err := yaml.Marshal(r)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	fmt.Fprintf(stdout, "# Regression gates calibrated from %d runs of one binary: each figure at its\n# mean, with %.0f %% of room on its worse side; figures whose runs spread wider\n# are listed as ungated. Regenerate with make perf-calibrate.\n%s", len(runs), 100*margin, out)
	return 0
}
