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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestKueueWaitStats(t *testing.T) {
	// Sum 1600 over 5; nearest rank: p50 is the 3rd, p95 the 5th.
	got := KueueWaitStats([]int64{1000, 0, 300, 100, 200})
	want := KueueWait{Count: 5, AvgMs: 320, P50Ms: 200, P95Ms: 1000, MaxMs: 1000}
	if got != want {
		t.Errorf("stats = %+v, want %+v", got, want)
	}
	// Kueue's average truncates: 3 / 2 = 1.
	if got, want := KueueWaitStats([]int64{2, 1}), (KueueWait{Count: 2, AvgMs: 1, P50Ms: 1, P95Ms: 2, MaxMs: 2}); got != want {
		t.Errorf("stats = %+v, want %+v", got, want)
	}
	if got := KueueWaitStats(nil); got != (KueueWait{}) {
		t.Errorf("no samples: %+v", got)
	}
}

func TestFillKueue(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	cfg := &Config{Classes: []Class{{Name: "small", CPU: resource.MustParse("1")}, {Name: "large", CPU: resource.MustParse("20")}}}
	tl := timeline{units: []unitRecord{
		// Admitted twice: the last admission counts, 1500 ms after first sight.
		{class: "small", firstSeen: at(0), firstAdmitted: at(200), lastAdmitted: at(1500), admissions: 2},
		// 299.9 ms truncates to 299.
		{class: "small", firstSeen: at(1000), lastAdmitted: t0.Add(1299900 * time.Microsecond), admissions: 1},
		// Seen, never admitted: 0, as in Kueue's recorder.
		{class: "large", firstSeen: at(2000)},
		// Never seen: not counted.
		{class: "large"},
	}}
	scrape := `rest_client_requests_total{code="200",method="GET"} 100
rest_client_requests_total{code="200",method="PATCH"} 28
rest_client_requests_total{code="409",method="PATCH"} 2
rest_client_requests_total{code="201",method="POST"} 6
rest_client_requests_total{code="200",method="PUT"} 3
`
	samples, err := parseProm(strings.NewReader(scrape))
	if err != nil {
		t.Fatal(err)
	}
	s := &Summary{Ideal: Ideal{Seconds: 4}}
	s.fillKueue(cfg, tl, at(9000).Sub(at(-1000)), nil, samples)
	want := &KueueFigures{
		// exit - start = 10 s; 3 admissions; ideal 4 s.
		WallSeconds: 10, WallToIdeal: 2.5, Admissions: 3, AdmissionsPerSecond: 0.3,
		TimeToAdmission: map[string]KueueWait{
			"small": {Count: 2, AvgMs: 899, P50Ms: 299, P95Ms: 1500, MaxMs: 1500},
			"large": {Count: 1},
		},
		WritesByMethod: map[string]float64{"PATCH": 30, "POST": 6, "PUT": 3}, Writes: 39,
	}
	if diff := cmp.Diff(want, s.Kueue); diff != "" {
		t.Errorf("kueue figures (-want +got):\n%s", diff)
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": ModeDefault, "default": ModeDefault, "kueue": ModeKueue} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseMode("fast"); err == nil || !strings.Contains(err.Error(), "fast") {
		t.Errorf("ParseMode(fast) error = %v", err)
	}
}

// In Kueue mode koord-queue's events go at its client limits, as
// minimalkueue's do; otherwise at koord-queue's own event limits.
func TestKueueModeEventLimits(t *testing.T) {
	kueue := Options{Mode: ModeKueue, QPS: 1000, Burst: 2000}
	if diff := cmp.Diff([]string{"--event-qps", "1000", "--event-burst", "2000"}, kueue.kueueEventLimits()); diff != "" {
		t.Errorf("Kueue mode (-want +got):\n%s", diff)
	}
	if got := (&Options{Mode: ModeDefault, QPS: 1000, Burst: 2000}).kueueEventLimits(); got != nil {
		t.Errorf("default mode: %v, want koord-queue's own event limits", got)
	}
}
