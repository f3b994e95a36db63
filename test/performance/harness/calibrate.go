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

// Calibrate makes the range file of a measured run: each regression figure
// it has may get worse by margin (a fraction), the invariants hold exactly.
// source names the run in the file.
func Calibrate(figures map[string]float64, source string, margin float64) (*Ranges, error) {
	if margin <= 0 || margin >= 1 {
		return nil, fmt.Errorf("margin %v is not a fraction between 0 and 1", margin)
	}
	r := &Ranges{Source: source, Figures: map[string]Range{}}
	for name, rg := range invariants {
		if _, ok := figures[name]; !ok {
			return nil, fmt.Errorf("the summary has no %s", name)
		}
		r.Figures[name] = rg
	}
	for _, f := range regressionFigures {
		for name, v := range figures {
			if !matches(name, f.path, f.suffix) {
				continue
			}
			if f.better == higher {
				r.Figures[name] = Range{Min: ptr(significant(v*(1-margin), math.Floor)), Why: fmt.Sprintf("measured %g, less %.0f %%", v, 100*margin)}
			} else {
				r.Figures[name] = Range{Max: ptr(significant(v*(1+margin), math.Ceil)), Why: fmt.Sprintf("measured %g, plus %.0f %%", v, 100*margin)}
			}
		}
	}
	return r, nil
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
