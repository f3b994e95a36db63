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

package invariants

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

var listAll = metav1.ListOptions{}

// maxListed bounds the violations listed one by one; all are counted.
const maxListed = 200

// Report is what a run found.
type Report struct {
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	// Jobs in the watched namespace at the end, and how they ended.
	JobsCreated int `json:"jobsCreated"`
	JobsDone    int `json:"jobsDone"`
	JobsFailed  int `json:"jobsFailed"`
	// Admissions: units that went from a phase without quota to one with.
	Admissions int `json:"admissions"`
	// AdmissionsInRelists: units first seen finished, never holding quota,
	// inside a relisted window: admitted and done where the checker could
	// not see each step.
	AdmissionsInRelists int `json:"admissionsInRelists,omitempty"`
	// Evictions: units that went from holding quota back to waiting.
	Evictions int `json:"evictions"`
	// PodEvents and UnitEvents are the watch events applied: the samples.
	PodEvents  int `json:"podEvents"`
	UnitEvents int `json:"unitEvents"`
	// UnheldJobs counts the jobs the webhook never saw that ran with no unit
	// holding quota before the backstop caught them (UnheldBound).
	UnheldJobs int `json:"unheldJobs,omitempty"`
	// OverMaxWithPodsBeingDeleted counts the times a quota's live pods plus
	// its pods being deleted went above its max (allowed, reported apart).
	OverMaxWithPodsBeingDeleted int `json:"overMaxWithPodsBeingDeleted"`
	// LongestOverMaxWithPodsBeingDeleted is the longest such time seen
	// (judged against TerminatingBound).
	LongestOverMaxWithPodsBeingDeleted string `json:"longestOverMaxWithPodsBeingDeleted,omitempty"`
	longestLeaving                     time.Duration
	// UnsettledEvents are the watch events Finish applied before the other
	// watch had passed them (its frontier did not move in time); their
	// verdicts may rest on a stale view and should be 0.
	UnsettledEvents int `json:"unsettledEvents"`
	// Relists are the windows a stream could not watch (its version had
	// expired, as after a kube-apiserver restart) and listed instead: what
	// changed inside one is seen only at its end, where every job and quota
	// is judged again.
	Relists []Relist `json:"relists,omitempty"`
	// PeakUse is, per quota and resource, the most its live pods requested,
	// next to its max.
	PeakUse map[string]map[corev1.ResourceName]Peak `json:"peakUse,omitempty"`
	// PeakHeld is, per quota and resource, the most the units holding
	// quota were admitted with, next to its max.
	PeakHeld map[string]map[corev1.ResourceName]Peak `json:"peakHeld,omitempty"`
	Faults   []FaultFigures                          `json:"faults"`
	Audit    *AuditFigures                           `json:"audit,omitempty"`
	// ControllersAudit is the same check of koord-queue-controllers.
	ControllersAudit *AuditFigures `json:"controllersAudit,omitempty"`
	// ViolationCounts counts every violation by kind; Violations lists the
	// first ones.
	ViolationCounts map[string]int `json:"violationCounts"`
	Violations      []Violation    `json:"violations"`
}

// Relist is a window (from, to] of resourceVersions a stream listed.
type Relist struct {
	Resource            string    `json:"resource"`
	At                  time.Time `json:"at"`
	FromResourceVersion int64     `json:"fromResourceVersion"`
	ToResourceVersion   int64     `json:"toResourceVersion"`
}

// Peak is the highest use seen of a quota's resource, in milli-units.
type Peak struct {
	UsedMilli int64 `json:"usedMilli"`
	MaxMilli  int64 `json:"maxMilli"`
}

// Violation is one broken promise.
type Violation struct {
	Kind            string    `json:"kind"`
	At              time.Time `json:"at"`
	ResourceVersion int64     `json:"resourceVersion,omitempty"`
	Message         string    `json:"message"`
}

// Fault is a fault injected by the caller.
type Fault struct {
	Kind   string    `json:"kind"`
	Target string    `json:"target"`
	At     time.Time `json:"at"`
}

// FaultFigures say how admissions went on after a fault, until the next
// one (or the end of the run).
type FaultFigures struct {
	Fault
	// FirstAdmissionAfter is the time from the fault to the next admission
	// seen; empty when none came before the next fault.
	FirstAdmissionAfter string `json:"firstAdmissionAfter,omitempty"`
	// LongestWithoutAdmission is the longest time without an admission from
	// the fault to the next fault or the end of the run; the time from the
	// window's last admission to its end counts only when admissions went on
	// after it (otherwise the work had simply run out).
	LongestWithoutAdmission string `json:"longestWithoutAdmission"`
	Admissions              int    `json:"admissions"`
	// PeakHeld and PeakUse are, per quota and resource, the most held and
	// used while this fault was the last one (from what was held when it
	// began).
	PeakHeld map[string]map[corev1.ResourceName]Peak `json:"peakHeld,omitempty"`
	PeakUse  map[string]map[corev1.ResourceName]Peak `json:"peakUse,omitempty"`
}

// Total is the number of violations of every kind.
func (r *Report) Total() int {
	n := 0
	for _, v := range r.ViolationCounts {
		n += v
	}
	return n
}

func (r *Report) addViolation(v Violation) {
	if r.ViolationCounts == nil {
		r.ViolationCounts = map[string]int{}
	}
	r.ViolationCounts[v.Kind]++
	if len(r.Violations) < maxListed {
		r.Violations = append(r.Violations, v)
	}
}

func (r *Report) noteLeaving(d time.Duration) {
	if d > r.longestLeaving {
		r.longestLeaving = d
		r.LongestOverMaxWithPodsBeingDeleted = d.Round(time.Millisecond).String()
	}
}

func (r *Report) notePeak(q string, res corev1.ResourceName, used, max int64) {
	r.PeakUse = notePeak(r.PeakUse, q, res, used, max)
}

func (r *Report) noteHeldPeak(q string, res corev1.ResourceName, held, max int64) {
	r.PeakHeld = notePeak(r.PeakHeld, q, res, held, max)
}

func notePeak(m map[string]map[corev1.ResourceName]Peak, q string, res corev1.ResourceName, v, max int64) map[string]map[corev1.ResourceName]Peak {
	if m == nil {
		m = map[string]map[corev1.ResourceName]Peak{}
	}
	if m[q] == nil {
		m[q] = map[corev1.ResourceName]Peak{}
	}
	if p := m[q][res]; v >= p.UsedMilli {
		m[q][res] = Peak{UsedMilli: v, MaxMilli: max}
	}
	return m
}

// faultFigures measures, for each fault, the admissions (times, ascending)
// until the next fault or end.
func faultFigures(faults []Fault, admitted []time.Time, end time.Time) []FaultFigures {
	out := make([]FaultFigures, 0, len(faults))
	for i, f := range faults {
		until := end
		if i+1 < len(faults) {
			until = faults[i+1].At
		}
		ff := FaultFigures{Fault: f}
		last := f.At
		var longest time.Duration
		for _, a := range admitted {
			if a.Before(f.At) || !a.Before(until) {
				continue
			}
			if ff.Admissions == 0 {
				ff.FirstAdmissionAfter = a.Sub(f.At).Round(time.Millisecond).String()
			}
			ff.Admissions++
			longest = max(longest, a.Sub(last))
			last = a
		}
		if len(admitted) > 0 && !admitted[len(admitted)-1].Before(until) {
			longest = max(longest, until.Sub(last))
		}
		ff.LongestWithoutAdmission = longest.Round(time.Millisecond).String()
		out = append(out, ff)
	}
	return out
}

// WriteTo writes report.yaml and report.json into dir.
func (r *Report) WriteTo(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	j, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), j, 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, "report.yaml"), y, 0o644)
}
