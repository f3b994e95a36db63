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
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/koordinator-sh/koord-queue/test/performance/harness"
)

// Figures are one run's figures, by Kueue's definitions, for either side.
type Figures struct {
	Units     int `json:"units"`
	Completed int `json:"completed"`
	// WallSeconds is the scheduler process's start to its exit.
	WallSeconds float64 `json:"wallSeconds"`
	WallToIdeal float64 `json:"wallToIdealRatio"`
	// APIBoundSeconds is the least wall time the API server allows on this
	// machine (harness.CPUFigures.APIBoundSeconds), measured in our runs
	// only: Kueue's runner reads no API server figures, so Build gives its
	// runs the mean bound of ours (the same units, machine and binaries).
	APIBoundSeconds float64 `json:"apiBoundSeconds,omitempty"`
	WallToAPIBound  float64 `json:"wallToAPIBoundRatio,omitempty"`
	// Admissions counts re-admissions too.
	Admissions          int     `json:"admissions"`
	AdmissionsPerSecond float64 `json:"admissionsPerSecond"`
	// TimeToAdmission is per class: first sight to last admission.
	TimeToAdmission map[string]harness.KueueWait `json:"timeToAdmission"`
	// CPUSeconds is the scheduler's user+system CPU over its life.
	CPUSeconds float64 `json:"cpuSeconds"`
	// PeakRSSMiB is the scheduler's VmHWM read until it exited;
	// RusagePeakRSSMiB the rusage figure of its exit, which also counts the
	// peak of the process that started it (harness.RSSPeak). Kueue runs
	// from before the sampling have only the latter.
	PeakRSSMiB       float64 `json:"peakRSSMiB"`
	RusagePeakRSSMiB float64 `json:"rusagePeakRSSMiB,omitempty"`
	// WritesPerAdmission is the scheduler's writes by HTTP method over its
	// life divided by admissions; "total" sums them.
	WritesPerAdmission map[string]float64 `json:"writesPerAdmission"`
	QuotaViolations    int                `json:"quotaViolations"`
	Evictions          int                `json:"evictions"`
}

// finish derives the per-admission and per-second figures.
func (f *Figures) finish(writes map[string]float64, ideal float64) {
	f.WritesPerAdmission = map[string]float64{}
	var total float64
	for m, v := range writes {
		total += v
		if f.Admissions > 0 {
			f.WritesPerAdmission[m] = round(v/float64(f.Admissions), 3)
		}
	}
	if f.Admissions > 0 {
		f.WritesPerAdmission["total"] = round(total/float64(f.Admissions), 3)
	}
	if f.WallSeconds > 0 {
		f.AdmissionsPerSecond = round(float64(f.Admissions)/f.WallSeconds, 3)
		if ideal > 0 {
			f.WallToIdeal = round(f.WallSeconds/ideal, 3)
		}
	}
}

func waits(classes []string, byClass map[string][]int64) map[string]harness.KueueWait {
	out := map[string]harness.KueueWait{}
	for _, c := range classes {
		out[c] = harness.KueueWaitStats(byClass[c])
	}
	return out
}

func parseWrites(scrape []byte) (map[string]float64, error) {
	by, _, err := harness.WritesByMethod(bytes.NewReader(scrape))
	return by, err
}

// FromOurs takes a Kueue-mode summary of our harness.
func FromOurs(s *harness.Summary) (Figures, error) {
	k := s.Kueue
	if k == nil {
		return Figures{}, fmt.Errorf("summary of %s has no kueueEquivalent figures: run the harness with --mode kueue", s.Config)
	}
	f := Figures{
		Units: s.Units, Completed: s.Completed, WallSeconds: k.WallSeconds, Admissions: k.Admissions,
		TimeToAdmission: k.TimeToAdmission, CPUSeconds: round(k.UserCPUSeconds+k.SystemCPUSeconds, 3), PeakRSSMiB: k.MaxRSSMiB, RusagePeakRSSMiB: k.RusageMaxRSSMiB,
		QuotaViolations: s.Quota.Violations, Evictions: s.Evictions.Total,
		APIBoundSeconds: s.CPU.APIBoundSeconds, WallToAPIBound: s.CPU.WallToAPIBound,
	}
	f.finish(k.WritesByMethod, s.Ideal.Seconds)
	return f, nil
}

// Row is one figure: each side's runs, their means, and ours / Kueue's.
type Row struct {
	Figure string    `json:"figure"`
	Kueue  float64   `json:"kueue"`
	Ours   float64   `json:"ours"`
	Ratio  *float64  `json:"ratio,omitempty"`
	KRuns  []float64 `json:"kueueRuns"`
	ORuns  []float64 `json:"ourRuns"`
	// RoundRatios are ours / Kueue's round by round (Kueue's run i, then
	// ours i), where Kueue's figure is not 0: how far one round's ratio
	// strays from the ratio of the means.
	RoundRatios []float64 `json:"roundRatios,omitempty"`
}

// Table is the comparison of one pair of configs.
type Table struct {
	Pair string `json:"pair"`
	// Notes say what the runs were and what differs.
	Notes []string  `json:"notes,omitempty"`
	Rows  []Row     `json:"rows"`
	Kueue []Figures `json:"kueueRuns"`
	Ours  []Figures `json:"ourRuns"`
}

// Build makes the table of a pair from each side's runs (the same number
// or not) and the classes to show. Means are arithmetic; the ratio is
// ours / Kueue's, absent when Kueue's mean is 0. Kueue's runs get the mean
// API bound of ours (see Figures.APIBoundSeconds).
func Build(pair string, classes []string, kueue, ours []Figures) Table {
	var bounds []float64
	for _, f := range ours {
		if f.APIBoundSeconds > 0 {
			bounds = append(bounds, f.APIBoundSeconds)
		}
	}
	kueue = append([]Figures(nil), kueue...)
	if bound := mean(bounds); bound > 0 {
		for i := range kueue {
			kueue[i].APIBoundSeconds = bound
			kueue[i].WallToAPIBound = round(kueue[i].WallSeconds/bound, 3)
		}
	}
	t := Table{Pair: pair, Kueue: kueue, Ours: ours}
	add := func(name string, get func(Figures) float64) {
		r := Row{Figure: name}
		for _, f := range kueue {
			r.KRuns = append(r.KRuns, get(f))
		}
		for _, f := range ours {
			r.ORuns = append(r.ORuns, get(f))
		}
		r.Kueue, r.Ours = mean(r.KRuns), mean(r.ORuns)
		for i := range min(len(r.KRuns), len(r.ORuns)) {
			if r.KRuns[i] != 0 {
				r.RoundRatios = append(r.RoundRatios, round(r.ORuns[i]/r.KRuns[i], 2))
			}
		}
		if r.Kueue != 0 {
			v := round(r.Ours/r.Kueue, 2)
			r.Ratio = &v
		}
		t.Rows = append(t.Rows, r)
	}
	add("completed units", func(f Figures) float64 { return float64(f.Completed) })
	add("wall time (s)", func(f Figures) float64 { return f.WallSeconds })
	add("wall / ideal", func(f Figures) float64 { return f.WallToIdeal })
	if len(bounds) > 0 {
		add("wall / API bound", func(f Figures) float64 { return f.WallToAPIBound })
	}
	add("admissions / s", func(f Figures) float64 { return f.AdmissionsPerSecond })
	for _, c := range classes {
		add("time to admission avg, "+c+" (s)", func(f Figures) float64 { return float64(f.TimeToAdmission[c].AvgMs) / 1000 })
		add("time to admission p50, "+c+" (s)", func(f Figures) float64 { return float64(f.TimeToAdmission[c].P50Ms) / 1000 })
		add("time to admission p95, "+c+" (s)", func(f Figures) float64 { return float64(f.TimeToAdmission[c].P95Ms) / 1000 })
	}
	add("scheduler CPU (s)", func(f Figures) float64 { return f.CPUSeconds })
	add("peak RSS (MiB)", func(f Figures) float64 { return f.PeakRSSMiB })
	methods := map[string]bool{}
	for _, f := range append(append([]Figures(nil), kueue...), ours...) {
		for m := range f.WritesPerAdmission {
			if m != "total" {
				methods[m] = true
			}
		}
	}
	for _, m := range sortedKeys(methods) {
		add("API writes / admission, "+m, func(f Figures) float64 { return f.WritesPerAdmission[m] })
	}
	add("API writes / admission, total", func(f Figures) float64 { return f.WritesPerAdmission["total"] })
	add("evictions", func(f Figures) float64 { return float64(f.Evictions) })
	add("quota violations", func(f Figures) float64 { return float64(f.QuotaViolations) })
	return t
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return round(s/float64(len(v)), 3)
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

func num(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
}

// Markdown renders the table: one row per figure, the means, the ratio,
// the lowest and highest ratio of a round, and every run.
func (t Table) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| %s | Kueue | ours | ratio (ours / Kueue) | ratio per round | Kueue runs | our runs |\n|---|---|---|---|---|---|---|\n", t.Pair)
	for _, r := range t.Rows {
		ratio := "-"
		if r.Ratio != nil {
			ratio = num(*r.Ratio)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Figure, num(r.Kueue), num(r.Ours), ratio, spread(r.RoundRatios), joinNums(r.KRuns), joinNums(r.ORuns))
	}
	for _, n := range t.Notes {
		fmt.Fprintf(&b, "\n- %s", n)
	}
	if len(t.Notes) > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

// spread is "low to high" of v, its one value, or "-" when empty.
func spread(v []float64) string {
	switch {
	case len(v) == 0:
		return "-"
	case slices.Min(v) == slices.Max(v):
		return num(v[0])
	}
	return num(slices.Min(v)) + " to " + num(slices.Max(v))
}

func joinNums(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = num(x)
	}
	return strings.Join(s, " / ")
}
