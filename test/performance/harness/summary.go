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
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"sigs.k8s.io/yaml"
)

// Summary is what a run writes to summary.yaml. Checkers address its figures
// by their dotted YAML paths (for example utilization.overall).
type Summary struct {
	Config string `json:"config"`
	Setup  Setup  `json:"setup"`

	Units     int  `json:"units"`
	Completed int  `json:"completed"`
	TimedOut  bool `json:"timedOut"`
	// Interrupted is set when the run was stopped by a signal (TimedOut too).
	Interrupted bool `json:"interrupted,omitempty"`
	Admissions  int  `json:"admissions"`
	// CompletedRatio is completed / units.
	CompletedRatio float64 `json:"completedRatio"`

	// WallSeconds runs from the first creation to the last completion.
	WallSeconds  float64 `json:"wallSeconds"`
	Ideal        Ideal   `json:"ideal"`
	WallToIdeal  float64 `json:"wallToIdealRatio"`
	CreateSpread float64 `json:"creationSpanSeconds"`

	// AdmissionWait is the time from creation to first admission, per class.
	AdmissionWait map[string]WaitStats `json:"admissionWait"`
	Utilization   Utilization          `json:"utilization"`
	Quota         QuotaCheck           `json:"quota"`
	API           APIFigures           `json:"api"`
	Process       ProcessFigures       `json:"process"`
	CPU           CPUFigures           `json:"cpu"`
	Passes        PassFigures          `json:"schedulingPasses"`
	Evictions     EvictionFigures      `json:"evictions"`
	// Events checks koord-queue's events against admissions and evictions.
	Events EventFigures `json:"events"`
	// HarnessWriteErrors are failed writes of the fake extension (not conflicts).
	HarnessWriteErrors int    `json:"harnessWriteErrors"`
	HarnessLastError   string `json:"harnessLastError,omitempty"`
	// Unfinished counts, by phase (and ",evicted"), the units still not done
	// at the end of a run that timed out.
	Unfinished map[string]int `json:"unfinished,omitempty"`
	// Kueue holds the figures by Kueue's definitions (ModeKueue runs only).
	Kueue *KueueFigures `json:"kueueEquivalent,omitempty"`
}

// Setup names the conditions of a run.
type Setup struct {
	QPS              float32   `json:"qps"`
	Burst            int       `json:"burst"`
	ExtensionWorkers int       `json:"extensionWorkers"`
	KoordQueueArgs   []string  `json:"koordQueueArgs"`
	Commit           string    `json:"commit"`
	ServerVersion    string    `json:"serverVersion"`
	Machine          Machine   `json:"machine"`
	StartedAt        time.Time `json:"startedAt"`
	// LoadAverage is /proc/loadavg at the start and at the end of the run:
	// other work on the machine shows here.
	LoadAverageStart string `json:"loadAverageStart"`
	LoadAverageEnd   string `json:"loadAverageEnd"`
	// Mode is the harness mode ("" or "kueue"); APIServerInflight the API
	// server's max requests / max mutating requests in flight.
	Mode              string `json:"mode,omitempty"`
	APIServerInflight string `json:"apiServerInflight,omitempty"`
}

// WaitStats are seconds from creation to first admission.
type WaitStats struct {
	Count  int     `json:"count"`
	AvgSec float64 `json:"avgSeconds"`
	P50Sec float64 `json:"p50Seconds"`
	P95Sec float64 `json:"p95Seconds"`
	MaxSec float64 `json:"maxSeconds"`
}

// Utilization is the time integral of used / max over the wall time.
type Utilization struct {
	Overall   float64            `json:"overall"`
	PerParent map[string]float64 `json:"perParent"`
}

// QuotaCheck is the check of the recorded timeline against every max.
type QuotaCheck struct {
	// Violations is the number of quotas whose recorded use went above max.
	Violations int `json:"violations"`
	// PeakParentRatio and PeakChildRatio are the highest used / max seen.
	PeakParentRatio float64  `json:"peakParentRatio"`
	PeakChildRatio  float64  `json:"peakChildRatio"`
	Details         []string `json:"details,omitempty"`
}

// APIFigures are koord-queue's own requests during the run (from the first
// creation to the end), from rest_client_requests_total.
type APIFigures struct {
	Writes               float64            `json:"writes"`
	WritesPerAdmission   float64            `json:"writesPerAdmission"`
	WritesPerUnit        float64            `json:"writesPerUnit"`
	Requests             float64            `json:"requests"`
	ByMethod             map[string]float64 `json:"byMethod"`
	ByCode               map[string]float64 `json:"byCode"`
	WritesBeforeWorkload float64            `json:"writesBeforeWorkload"`
	// UnitStatusWrites are changes of QueueUnits seen through the harness's
	// watch that the harness did not make: the scheduler's status writes.
	UnitStatusWrites             int     `json:"unitStatusWrites"`
	UnitStatusWritesPerAdmission float64 `json:"unitStatusWritesPerAdmission"`
	// Events are the events koord-queue recorded in the namespace (counting
	// repeats of a series), listed at the end.
	Events             int            `json:"events"`
	EventsPerAdmission float64        `json:"eventsPerAdmission"`
	EventsByReason     map[string]int `json:"eventsByReason"`
}

// ProcessFigures are koord-queue's CPU and memory over its whole life.
type ProcessFigures struct {
	UserCPUSeconds    float64 `json:"userCPUSeconds"`
	SystemCPUSeconds  float64 `json:"systemCPUSeconds"`
	CPUSecondsPerUnit float64 `json:"cpuSecondsPerUnit"`
	PeakRSSMiB        float64 `json:"peakRSSMiB"`
}

// CPUFigures are the CPU seconds (user+system) each process of the run used
// from the first creation to the end, and how busy that kept the machine.
// On a small machine the API server, not koord-queue, is usually the limit;
// these figures show it.
type CPUFigures struct {
	KoordQueueSeconds float64 `json:"koordQueueSeconds"`
	APIServerSeconds  float64 `json:"apiServerSeconds"`
	EtcdSeconds       float64 `json:"etcdSeconds"`
	// HarnessSeconds is this process: unit creation and the fake extension.
	HarnessSeconds float64 `json:"harnessSeconds"`
	// MachineBusy is the sum of the above over nproc x the run's duration.
	MachineBusy float64 `json:"machineBusy"`
	// APIServerWrites are the writes the API server handled in the run (all
	// clients), and ControlPlaneMillisPerWrite the kube-apiserver and etcd CPU
	// per write (reads and watches included).
	APIServerWrites            float64 `json:"apiServerWrites,omitempty"`
	ControlPlaneMillisPerWrite float64 `json:"controlPlaneMillisPerWrite,omitempty"`
	// APIBoundSeconds is a lower bound on this machine: MinWritesPerUnit
	// writes per unit at that CPU cost, with every core given to the control
	// plane. Compare wallSeconds with it as with the quota-bound ideal.
	APIBoundSeconds float64 `json:"apiBoundSeconds,omitempty"`
	WallToAPIBound  float64 `json:"wallToAPIBoundRatio,omitempty"`
	Note            string  `json:"note,omitempty"`
}

// PassFigures come from koord_queue_scheduling_passes_total when exported.
type PassFigures struct {
	Present   bool    `json:"present"`
	Total     float64 `json:"total"`
	PerSecond float64 `json:"perSecond"`
	Note      string  `json:"note,omitempty"`
}

// EvictionFigures count evictions the extension carried out.
type EvictionFigures struct {
	Total        int            `json:"total"`
	UnitsEvicted int            `json:"unitsEvicted"`
	ByReason     map[string]int `json:"byReason"`
	ByClass      map[string]int `json:"byClass"`
}

func secs(d time.Duration) float64 { return math.Round(d.Seconds()*1000) / 1000 }

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// fill computes the timeline figures of s.
func (s *Summary) fill(cfg *Config, tl timeline, end time.Time) {
	var first, lastCreate, lastDone time.Time
	waits := map[string][]float64{}
	s.Evictions = EvictionFigures{ByReason: tl.evictions, ByClass: map[string]int{}}
	for _, u := range tl.units {
		if !u.created.IsZero() && (first.IsZero() || u.created.Before(first)) {
			first = u.created
		}
		if u.created.After(lastCreate) {
			lastCreate = u.created
		}
		if !u.finished.IsZero() {
			s.Completed++
			if u.finished.After(lastDone) {
				lastDone = u.finished
			}
		}
		if !u.firstAdmitted.IsZero() {
			waits[u.class] = append(waits[u.class], u.firstAdmitted.Sub(u.created).Seconds())
		}
		s.Admissions += u.admissions
		if u.evictions > 0 {
			s.Evictions.UnitsEvicted++
			s.Evictions.Total += u.evictions
			s.Evictions.ByClass[u.class] += u.evictions
		}
	}
	s.Units = len(tl.units)
	s.CompletedRatio = round(float64(s.Completed)/float64(max(s.Units, 1)), 4)
	if s.Completed < s.Units || lastDone.IsZero() {
		lastDone = end
	}
	s.WallSeconds = secs(lastDone.Sub(first))
	s.CreateSpread = secs(lastCreate.Sub(first))
	s.Ideal = cfg.IdealMakespan()
	s.Ideal.Seconds, s.Ideal.WorkBound, s.Ideal.ArrivalBound = round(s.Ideal.Seconds, 3), round(s.Ideal.WorkBound, 3), round(s.Ideal.ArrivalBound, 3)
	s.WallToIdeal = round(s.WallSeconds/s.Ideal.Seconds, 3)
	s.AdmissionWait = map[string]WaitStats{}
	for _, k := range cfg.Classes {
		s.AdmissionWait[k.Name] = waitStats(waits[k.Name])
	}
	s.Utilization, s.Quota = sweep(cfg, tl.intervals, first, lastDone)
}

func waitStats(v []float64) WaitStats {
	if len(v) == 0 {
		return WaitStats{}
	}
	sort.Float64s(v)
	var sum float64
	for _, x := range v {
		sum += x
	}
	pct := func(p float64) float64 { return round(v[int(math.Ceil(p*float64(len(v))))-1], 3) }
	return WaitStats{Count: len(v), AvgSec: round(sum/float64(len(v)), 3), P50Sec: pct(0.5), P95Sec: pct(0.95), MaxSec: round(v[len(v)-1], 3)}
}

// sweep walks the charge intervals in time order: it integrates use per
// parent over [from, to] and checks every quota's use against its max.
// Releases at the same instant as an admission are applied first.
func sweep(cfg *Config, ivs []interval, from, to time.Time) (Utilization, QuotaCheck) {
	type edge struct {
		at    time.Time
		delta int64
		iv    *interval
	}
	var edges []edge
	for i := range ivs {
		iv := &ivs[i]
		edges = append(edges, edge{iv.start, iv.unit.cpuMilli, iv}, edge{iv.end, -iv.unit.cpuMilli, iv})
	}
	sort.SliceStable(edges, func(i, j int) bool {
		if !edges[i].at.Equal(edges[j].at) {
			return edges[i].at.Before(edges[j].at)
		}
		return edges[i].delta < edges[j].delta
	})
	parentMax, childMax := cfg.Parents.Max.MilliValue(), cfg.Children.Max.MilliValue()
	used := map[string]int64{}
	integral := map[string]float64{} // milli-CPU seconds per parent
	peak := map[string]int64{}
	var total int64
	var totalIntegral float64
	last := from
	for _, e := range edges {
		at := e.at
		if at.Before(from) {
			at = from
		}
		if at.After(to) {
			at = to
		}
		if dt := at.Sub(last).Seconds(); dt > 0 {
			for p := range cfg.Parents.Count {
				integral[ParentName(p)] += float64(used[ParentName(p)]) * dt
			}
			totalIntegral += float64(total) * dt
			last = at
		}
		for _, q := range []string{e.iv.unit.quota, e.iv.unit.parent} {
			used[q] += e.delta
			peak[q] = max(peak[q], used[q])
		}
		total += e.delta
	}
	span := to.Sub(from).Seconds()
	u := Utilization{PerParent: map[string]float64{}}
	if span > 0 {
		for p := range cfg.Parents.Count {
			u.PerParent[ParentName(p)] = round(integral[ParentName(p)]/float64(parentMax)/span, 4)
		}
		u.Overall = round(totalIntegral/float64(parentMax*int64(cfg.Parents.Count))/span, 4)
	}
	var qc QuotaCheck
	for p := range cfg.Parents.Count {
		name := ParentName(p)
		qc.PeakParentRatio = max(qc.PeakParentRatio, round(float64(peak[name])/float64(parentMax), 4))
		if peak[name] > parentMax {
			qc.Violations++
			qc.Details = append(qc.Details, fmt.Sprintf("%s used %dm > max %dm", name, peak[name], parentMax))
		}
		for c := range cfg.Children.Count {
			name := ChildName(p, c)
			qc.PeakChildRatio = max(qc.PeakChildRatio, round(float64(peak[name])/float64(childMax), 4))
			if peak[name] > childMax {
				qc.Violations++
				qc.Details = append(qc.Details, fmt.Sprintf("%s used %dm > max %dm", name, peak[name], childMax))
			}
		}
	}
	return u, qc
}

// write stores summary.yaml, units.csv and intervals.csv in dir.
func (s *Summary) write(dir string, tl timeline, origin time.Time) error {
	data, err := yaml.Marshal(s)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.yaml"), data, 0o644); err != nil {
		return err
	}
	rel := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return strconv.FormatFloat(t.Sub(origin).Seconds(), 'f', 3, 64)
	}
	rows := [][]string{{"unit", "class", "quota", "parent", "cpu_milli", "priority", "created_s", "first_admitted_s", "last_admitted_s", "finished_s", "admissions", "evictions", "first_seen_s"}}
	for _, u := range tl.units {
		rows = append(rows, []string{u.name, u.class, u.quota, u.parent, strconv.FormatInt(u.cpuMilli, 10), strconv.Itoa(int(u.priority)),
			rel(u.created), rel(u.firstAdmitted), rel(u.lastAdmitted), rel(u.finished), strconv.Itoa(u.admissions), strconv.Itoa(u.evictions), rel(u.firstSeen)})
	}
	if err := writeCSV(filepath.Join(dir, "units.csv"), rows); err != nil {
		return err
	}
	rows = [][]string{{"unit", "class", "quota", "parent", "cpu_milli", "start_s", "end_s", "ended_by"}}
	for _, iv := range tl.intervals {
		by := "finished"
		switch {
		case iv.evicted:
			by = "evicted:" + iv.evictedReason
		case iv.unit.finished.IsZero():
			by = "open"
		}
		rows = append(rows, []string{iv.unit.name, iv.unit.class, iv.unit.quota, iv.unit.parent, strconv.FormatInt(iv.unit.cpuMilli, 10), rel(iv.start), rel(iv.end), by})
	}
	return writeCSV(filepath.Join(dir, "intervals.csv"), rows)
}

func writeCSV(path string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(rows); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
