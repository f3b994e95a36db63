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

// Command compare runs Kueue's scheduler performance harness and ours side
// by side (make perf-compare) and writes one table: compare.md,
// compare.yaml and compare.json in its output folder. See
// docs/performance.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/koordinator-sh/koord-queue/test/performance/kueuecmp"
)

func main() {
	var (
		pair    = flag.String("pair", "baseline", "baseline, large-scale or smoke.")
		runs    = flag.Int("runs", 2, "Rounds of Kueue then ours (2: Kueue, ours, Kueue, ours).")
		qps     = flag.Float64("qps", 50, "Both schedulers' client QPS: koord-queue --qps; minimalkueue hard-codes 50, so another value builds a copy of it patched to it.")
		burst   = flag.Int("burst", 100, "Both schedulers' client burst (koord-queue --burst; minimalkueue patched as for --qps).")
		version = flag.String("kueue-version", kueuecmp.DefaultVersion, "Kueue module version.")
		output  = flag.String("output", "", "Output folder; default $HOME/.cache/koord-queue/perf/compare-<pair>-<time>.")
		binary  = flag.String("binary", "", "A prebuilt koord-queue binary; default: built once.")
		verb    = flag.Int("v-ours", 2, "koord-queue's -v (Kueue's runner starts minimalkueue at log level 2).")
		prepare = flag.Bool("prepare-only", false, "Only fetch and build Kueue's harness.")
		from    = flag.String("from", "", "Rebuild the table from the runs already in this output folder.")
	)
	flag.Parse()
	ctrllog.SetLogger(klog.Background())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *prepare {
		k, err := kueuecmp.Prepare(ctx, *version, os.Stderr)
		if err != nil {
			fail(err)
		}
		fmt.Println(k.Runner, k.MinimalKueue, k.Checker)
		return
	}
	if *from != "" {
		t, err := kueuecmp.Tabulate(*pair, *from)
		if err != nil {
			fail(err)
		}
		fmt.Print(t.Markdown())
		return
	}
	out := *output
	if out == "" {
		out = kueuecmp.DefaultOutput(*pair)
	}
	t, err := kueuecmp.Compare(ctx, kueuecmp.Options{
		Pair: *pair, Runs: *runs, QPS: float32(*qps), Burst: *burst, KueueVersion: *version,
		Output: out, OurBinary: *binary, OurArgs: []string{fmt.Sprintf("--v=%d", *verb)}, Log: os.Stderr,
	})
	if err != nil {
		fail(err)
	}
	fmt.Print(t.Markdown())
	fmt.Println(out)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "compare:", err)
	os.Exit(1)
}
