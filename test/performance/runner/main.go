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

// Command runner performs one performance run of koord-queue: an envtest
// control plane, koord-queue as a separate process, QueueUnits created from
// a generator config, execution faked. It writes summary.yaml, units.csv and
// intervals.csv into the output folder and prints the summary's path.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/koordinator-sh/koord-queue/test/performance/harness"
)

type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, " ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func main() {
	var (
		config  = flag.String("config", "test/performance/configs/small.yaml", "Generator config.")
		output  = flag.String("output", "", "Output folder; default $HOME/.cache/koord-queue/perf/<config>-<timestamp>.")
		qps     = flag.Float64("qps", 100, "koord-queue --qps.")
		burst   = flag.Int("burst", 200, "koord-queue --burst.")
		binary  = flag.String("binary", "", "A prebuilt koord-queue binary; default: go build ./cmd/koord-queue.")
		workers = flag.Int("extension-workers", 0, "Workers of the fake job extension (0: 16, or 5 in kueue mode).")
		mode    = flag.String("mode", "default", "default, or kueue: Kueue-equivalent cadence, execution and figures (docs/performance.md).")
		extra   repeated
	)
	flag.Var(&extra, "koord-queue-arg", "Extra argument for koord-queue (repeatable).")
	flag.Parse()
	ctrllog.SetLogger(klog.Background())

	m, err := harness.ParseMode(*mode)
	if err != nil {
		fail(err)
	}
	cfg, err := harness.LoadConfig(*config)
	if err != nil {
		fail(err)
	}
	dir := *output
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			fail(err)
		}
		dir = filepath.Join(home, ".cache", "koord-queue", "perf", cfg.Name+"-"+time.Now().Format("20060102-150405"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := harness.Run(ctx, harness.Options{
		Config: cfg, OutputDir: dir, QPS: float32(*qps), Burst: *burst, Binary: *binary,
		ExtensionWorkers: *workers, ExtraArgs: extra, Log: os.Stderr, Mode: m,
	})
	if err != nil {
		fail(err)
	}
	fmt.Printf("%s: %d/%d units in %.1fs (ideal %.1fs, ratio %.2f), utilization %.1f%%, %.2f writes/admission, evictions %d, quota violations %d\n",
		cfg.Name, s.Completed, s.Units, s.WallSeconds, s.Ideal.Seconds, s.WallToIdeal, 100*s.Utilization.Overall,
		s.API.WritesPerAdmission, s.Evictions.Total, s.Quota.Violations)
	fmt.Println(filepath.Join(dir, "summary.yaml"))
	if s.TimedOut {
		os.Exit(1)
	}
	if s.Events.Missing > 0 || s.Events.Dropped > 0 {
		fmt.Fprintf(os.Stderr, "runner: events lost: %d missing %v, %v dropped by koord-queue\n", s.Events.Missing, s.Events.Details, s.Events.Dropped)
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "runner:", err)
	os.Exit(1)
}
