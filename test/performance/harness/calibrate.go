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
	"fmt"
	"math"
	"strings"
)

// RegressionMargin is how much worse than measured a regression gate lets a
// figure be: 25 %.
const RegressionMargin = 0.25

// better says which way a figure improves.
type better int

const (
	lower better = iota
	higher
)

// regressionFigures are the figures a range file gates, by dotted path; a
// path ending in ".*" stands for every key under it (admission waits per
// class), matched with the suffix after it.
var regressionFigures = []struct {
	path   string
	suffix string
	better better
}{
	{path: "wallSeconds"},
	{path: "wallToIdealRatio"},
	{path: "utilization.overall", better: higher},
	{path: "admissionWait.*", suffix: ".avgSeconds"},
	{path: "admissionWait.*", suffix: ".p95Seconds"},
	{path: "process.cpuSecondsPerUnit"},
	{path: "cpu.koordQueueSeconds"},
	{path: "process.peakRSSMiB"},
	{path: "api.writesPerAdmission"},
	{path: "api.unitStatusWritesPerAdmission"},
	{path: "evictions.total"},
}

// invariants hold in every run, whatever it measured.
var invariants = map[string]Range{
	"completedRatio":     {Min: ptr(1), Why: "every unit finishes"},
	"timedOut":           {Max: ptr(0)},
	"quota.violations":   {Max: ptr(0), Why: "no quota above its max in the timeline"},
	"harnessWriteErrors": {Max: ptr(0)},
	"events.missing":     {Max: ptr(0), Why: "every admission, eviction and release has its event"},
	"events.dropped":     {Max: ptr(0), Why: "koord-queue dropped no event"},
}

func ptr(v float64) *float64 { return &v }

// MinCalibrationRuns is how many runs of one binary a range file is
// calibrated from: a figure's spread is known only over several.
const MinCalibrationRuns = 3

// Measured is one run's figures and where they come from.
type Measured struct {
	Source  string
	Commit  string
	Figures map[string]float64
}

// Calibrate makes the range file of a measured run: each regression figure
// it has may get worse by margin (a fraction), the invariants hold exactly.
// source names the run in the file.
func Calibrate(figures map[string]float64, source string, margin float64) (*Ranges, error) {
	return CalibrateRuns([]Measured{{Source: source, Figures: figures}}, margin)
}

// CalibrateRuns makes the range file of several runs of one binary: each
// regression figure that every run has is gated at its mean, worse by
// margin, and only when every run lies within that bound: a figure whose
// runs spread wider than the margin could not tell a regression of margin
// from noise, so it is listed as ungated with its spread instead. The
// invariants hold exactly.
func CalibrateRuns(runs []Measured, margin float64) (*Ranges, error) {
	if margin <= 0 || margin >= 1 {
		return nil, fmt.Errorf("margin %v is not a fraction between 0 and 1", margin)
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("no run to calibrate from")
	}
	r := &Ranges{Figures: map[string]Range{}}
	for _, run := range runs {
		if run.Commit != runs[0].Commit {
			return nil, fmt.Errorf("runs of different binaries: %s at %q, %s at %q", runs[0].Source, runs[0].Commit, run.Source, run.Commit)
		}
		if len(runs) == 1 {
			r.Source = run.Source
		} else {
			r.Sources = append(r.Sources, run.Source)
		}
		for name := range invariants {
			if _, ok := run.Figures[name]; !ok {
				return nil, fmt.Errorf("%s has no %s", run.Source, name)
			}
		}
	}
	for name, rg := range invariants {
		r.Figures[name] = rg
	}
	for _, f := range regressionFigures {
		for name := range runs[0].Figures {
			if !matches(name, f.path, f.suffix) {
				continue
			}
			values := make([]float64, 0, len(runs))
			for _, run := range runs {
				if v, ok := run.Figures[name]; ok {
					values = append(values, v)
				}
			}
			if len(values) < len(runs) {
				continue // not measured by every run
			}
			gate(r, name, values, f.better, margin)
		}
	}
	return r, nil
}

// gate bounds figure name at the mean of values, worse by margin, or lists
// it as ungated when a run lies beyond that bound.
func gate(r *Ranges, name string, values []float64, b better, margin float64) {
	lo, hi, sum := values[0], values[0], 0.0
	for _, v := range values {
		lo, hi, sum = min(lo, v), max(hi, v), sum+v
	}
	mean := sum / float64(len(values))
	measured := fmt.Sprintf("measured %g", mean)
	if len(values) > 1 {
		measured = fmt.Sprintf("mean %.4g of %d runs (%.4g to %.4g)", mean, len(values), lo, hi)
	}
	if b == higher {
		bound := significant(mean*(1-margin), math.Floor)
		if lo < bound {
			r.ungate(name, measured, margin)
			return
		}
		r.Figures[name] = Range{Min: ptr(bound), Why: fmt.Sprintf("%s, less %.0f %%", measured, 100*margin)}
		return
	}
	bound := significant(mean*(1+margin), math.Ceil)
	if hi > bound {
		r.ungate(name, measured, margin)
		return
	}
	r.Figures[name] = Range{Max: ptr(bound), Why: fmt.Sprintf("%s, plus %.0f %%", measured, 100*margin)}
}

func (r *Ranges) ungate(name, measured string, margin float64) {
	if r.Ungated == nil {
		r.Ungated = map[string]string{}
	}
	r.Ungated[name] = fmt.Sprintf("%s: the runs spread wider than %.0f %% of the mean, so a regression of that much is not told from noise", measured, 100*margin)
}

func matches(name, path, suffix string) bool {
	if prefix, ok := strings.CutSuffix(path, "*"); ok {
		return strings.HasPrefix(name, prefix) && strings.HasSuffix(name, suffix) && !strings.Contains(strings.TrimSuffix(strings.TrimPrefix(name, prefix), suffix), ".")
	}
	return name == path
}

// significant rounds v to 4 significant digits with how (math.Ceil for a
// maximum, math.Floor for a minimum), so a bound never cuts into its margin.
func significant(v float64, how func(float64) float64) float64 {
	if v == 0 {
		return 0
	}
	p := math.Pow(10, 4-math.Ceil(math.Log10(math.Abs(v))))
	return how(v*p) / p
}
