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
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// Mode selects how a run creates units, fakes execution and measures.
type Mode string

const (
	// ModeDefault is the harness's own mode: units on an absolute schedule,
	// the fake extension writes Running then Succeed, times from the
	// harness's create request.
	ModeDefault Mode = ""
	// ModeKueue reproduces what Kueue's scheduler performance runner
	// (test/performance/scheduler in Kueue's module) does and measures, so
	// that the two can be set side by side; see KueueFigures.
	ModeKueue Mode = "kueue"
)

// ParseMode reads a --mode flag.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "default":
		return ModeDefault, nil
	case string(ModeKueue), "kueue-equivalent":
		return ModeKueue, nil
	}
	return "", fmt.Errorf("mode %q is neither default nor kueue", s)
}

// What Kueue's runner sets up, read from its main.go and controller.go.
const (
	// KueueMaxInflight and KueueMaxMutatingInflight are the API server limits
	// its envtest control plane starts with.
	KueueMaxInflight         = 800
	KueueMaxMutatingInflight = 400
	// Its own client keeps envtest's rest config limits.
	kueueHarnessQPS   = 1000
	kueueHarnessBurst = 2000
	// KueueExtensionWorkers is its Workload reconciler's concurrency.
	KueueExtensionWorkers = 5
)

func (o *Options) kueue() bool { return o.Mode == ModeKueue }

func (o *Options) frameworkOptions() []framework.Option {
	if o.kueue() {
		return []framework.Option{framework.WithInflightLimits(KueueMaxInflight, KueueMaxMutatingInflight)}
	}
	return nil
}

// inflight names the API server's in-flight limits of the run.
func (o *Options) inflight() string {
	if o.kueue() {
		return fmt.Sprintf("%d/%d", KueueMaxInflight, KueueMaxMutatingInflight)
	}
	return "2000/1000"
}

// KueueFigures are a run's figures by the definitions of Kueue's runner and
// checker, filled in ModeKueue only.
type KueueFigures struct {
	// WallSeconds runs from the start of the scheduler's process to its exit,
	// which the harness causes once every unit finished (Kueue's cmd stats
	// wallMs: minimalkueue's start to its exit once its recorder saw no
	// pending or reserving workload).
	WallSeconds float64 `json:"wallSeconds"`
	WallToIdeal float64 `json:"wallToIdealRatio"`
	// Admissions counts every observed admission (re-admissions too).
	Admissions          int     `json:"admissions"`
	AdmissionsPerSecond float64 `json:"admissionsPerSecond"`
	// TimeToAdmission is, per class, the milliseconds from the first sight
	// of a unit through the watch to its last observed admission (Kueue's
	// recorder keeps the last); a unit never admitted counts as 0, as there.
	TimeToAdmission map[string]KueueWait `json:"timeToAdmission"`
	// UserCPUSeconds and SystemCPUSeconds come from the process's rusage
	// after its exit (Kueue's cmd stats). MaxRSSMiB is its VmHWM, read
	// until it exited (RSSPeak); RusageMaxRSSMiB is the rusage figure
	// Kueue's cmd stats give, which counts the harness's own peak before
	// the start (see RSSPeak), kept for the record.
	UserCPUSeconds   float64 `json:"userCPUSeconds"`
	SystemCPUSeconds float64 `json:"systemCPUSeconds"`
	MaxRSSMiB        float64 `json:"maxRSSMiB"`
	RusageMaxRSSMiB  float64 `json:"rusageMaxRSSMiB"`
	// WritesByMethod are the scheduler's writes over its whole life
	// (rest_client_requests_total at its end, all but GET).
	WritesByMethod map[string]float64 `json:"writesByMethod"`
	Writes         float64            `json:"writes"`
}

// KueueWait are Kueue-style times to admission of one class, in ms.
type KueueWait struct {
	Count int   `json:"count"`
	AvgMs int64 `json:"avgMs"`
	P50Ms int64 `json:"p50Ms"`
	P95Ms int64 `json:"p95Ms"`
	MaxMs int64 `json:"maxMs"`
}

// KueueWaitStats summarizes per-unit times to admission (ms). The average is
// Kueue's: the integer sum over the count, truncated. Percentiles are
// nearest-rank.
func KueueWaitStats(ms []int64) KueueWait {
	if len(ms) == 0 {
		return KueueWait{}
	}
	v := append([]int64(nil), ms...)
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	var sum int64
	for _, x := range v {
		sum += x
	}
	rank := func(p float64) int64 { return v[max(int(math.Ceil(p*float64(len(v))))-1, 0)] }
	return KueueWait{Count: len(v), AvgMs: sum / int64(len(v)), P50Ms: rank(0.5), P95Ms: rank(0.95), MaxMs: v[len(v)-1]}
}

// kueueTimeToAdmitMs is Kueue's per-workload figure: last admission minus
// first sight, truncated to ms; 0 when the unit was never seen admitted.
func kueueTimeToAdmitMs(firstSeen, lastAdmitted time.Time) int64 {
	if firstSeen.IsZero() || lastAdmitted.IsZero() {
		return 0
	}
	return lastAdmitted.Sub(firstSeen).Milliseconds()
}

// fillKueue computes KueueFigures from the timeline and the exited
// process's wall time and state.
func (s *Summary) fillKueue(cfg *Config, tl timeline, wall time.Duration, st *os.ProcessState, lifetime []sample) {
	k := &KueueFigures{TimeToAdmission: map[string]KueueWait{}}
	byClass := map[string][]int64{}
	for _, u := range tl.units {
		k.Admissions += u.admissions
		if !u.firstSeen.IsZero() {
			byClass[u.class] = append(byClass[u.class], kueueTimeToAdmitMs(u.firstSeen, u.lastAdmitted))
		}
	}
	for _, c := range cfg.Classes {
		k.TimeToAdmission[c.Name] = KueueWaitStats(byClass[c.Name])
	}
	k.WallSeconds = secs(wall)
	if k.WallSeconds > 0 {
		k.AdmissionsPerSecond = round(float64(k.Admissions)/k.WallSeconds, 3)
		k.WallToIdeal = round(k.WallSeconds/s.Ideal.Seconds, 3)
	}
	if st != nil {
		k.UserCPUSeconds, k.SystemCPUSeconds = round(st.UserTime().Seconds(), 3), round(st.SystemTime().Seconds(), 3)
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
			k.RusageMaxRSSMiB = round(float64(ru.Maxrss)/1024, 1) // Linux: KiB
		}
	}
	k.MaxRSSMiB = s.Process.PeakRSSMiB
	k.WritesByMethod, k.Writes = writesByMethod(lifetime)
	s.Kueue = k
}

func writesByMethod(samples []sample) (map[string]float64, float64) {
	out := map[string]float64{}
	for m, v := range requestCounts(samples).byMethod {
		one := apiCounts{byMethod: map[string]float64{m: v}}
		if w := one.writes(); w > 0 {
			out[strings.ToUpper(m)] += w
		}
	}
	var total float64
	for _, v := range out {
		total += v
	}
	return out, total
}

// WritesByMethod reads a Prometheus text scrape of a scheduler and returns
// its writes (rest_client_requests_total, all but reads) by HTTP method, and
// their sum.
func WritesByMethod(r io.Reader) (map[string]float64, float64, error) {
	samples, err := parseProm(r)
	if err != nil {
		return nil, 0, err
	}
	by, total := writesByMethod(samples)
	return by, total, nil
}

// generateKueue creates the units with Kueue's cadence: per child quota and
// class one goroutine that, for each unit, sleeps the class's interval and
// then creates it (so the create latency adds up, as in Kueue's generator).
func generateKueue(ctx context.Context, c client.Client, cfg *Config, rec *Recorder) error {
	return generateUnits(ctx, cfg, rec,
		func(k Class, _ int) time.Duration { return k.Interval.Duration },
		func(ctx context.Context, u *schedv1alpha1.QueueUnit) error { return c.Create(ctx, u) })
}

// kueueEventLimits are koord-queue's event client limits in Kueue mode: the
// same as its other clients'. minimalkueue's events are written through a
// client of its one rest config, so they go at its QPS and burst; ours have
// a client of their own, 50 / 100 unless told, which bound our wall time
// once the other limits are raised past them.
func (o *Options) kueueEventLimits() []string {
	if !o.kueue() {
		return nil
	}
	return []string{"--event-qps", strconv.FormatFloat(float64(o.QPS), 'f', -1, 32), "--event-burst", strconv.Itoa(o.Burst)}
}
