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
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/koordinator-sh/koord-queue/test/integration/framework"
	"github.com/koordinator-sh/koord-queue/test/performance/harness"
)

// Pair is one comparison: our config and the Kueue config it translates.
type Pair struct {
	// Config is our generator config, relative to the repository.
	Config string
	// KueueConfig names Kueue's shipped config folder
	// (test/performance/scheduler/configs/<name>); empty when Kueue ships
	// none and the translation of ours is given to its runner.
	KueueConfig string
	// Note says where the pair comes from.
	Note string
}

// Pairs are the comparisons `make perf-compare PAIR=<name>` knows.
var Pairs = map[string]Pair{
	"baseline": {Config: "test/performance/configs/baseline.yaml", KueueConfig: "baseline",
		Note: "Kueue's baseline generator.yaml as shipped; ours, test/performance/configs/baseline.yaml, translates to exactly it (checked before running)."},
	"large-scale": {Config: "test/performance/configs/kueue-large-scale.yaml", KueueConfig: "large-scale",
		Note: "Kueue's large-scale shape (20 cohorts x 100 queues, 60,000 workloads); when the pinned release ships no configs/large-scale, Kueue's runner gets the translation of our kueue-large-scale.yaml."},
	"1000-queues": {Config: "test/performance/configs/kueue-1000-queues.yaml",
		Note: "1,000 queues (10 cohorts x 100, as large) and 10,000 units created over 70 s, a shape both schedulers finish on 2 cores; Kueue ships no such config, its runner gets the translation of our kueue-1000-queues.yaml."},
	"smoke": {Config: "test/performance/configs/kueue-smoke.yaml",
		Note: "A tiny config for the harness's own test; Kueue's runner gets its translation."},
}

// Options are the knobs of one comparison.
type Options struct {
	Pair string
	// Runs is the number of Kueue-then-ours rounds (2: Kueue, ours, Kueue, ours).
	Runs int
	// QPS and Burst are both schedulers' client limits; minimalkueue
	// hard-codes 50 / 100, so other limits build a patched copy of it
	// (Kueue.WithClientLimits).
	QPS   float32
	Burst int
	// KueueVersion is the module version to fetch.
	KueueVersion string
	// Output receives every run's folder and compare.{md,yaml,json}.
	Output string
	// OurBinary is a prebuilt koord-queue (empty: built once into Output).
	OurBinary string
	// OurArgs are extra koord-queue arguments (log verbosity).
	OurArgs []string
	Log     io.Writer
}

func (o *Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, "perf-compare: "+format+"\n", args...)
	}
}

// Compare prepares Kueue, runs both sides interleaved and writes the table.
func Compare(ctx context.Context, o Options) (*Table, error) {
	pair, ok := Pairs[o.Pair]
	if !ok {
		return nil, fmt.Errorf("unknown pair %q (known: %s)", o.Pair, strings.Join(sortedKeys(Pairs), ", "))
	}
	if o.Runs < 1 {
		o.Runs = 2
	}
	if o.KueueVersion == "" {
		o.KueueVersion = DefaultVersion
	}
	root := framework.RepoRoot()
	cfg, err := harness.LoadConfig(filepath.Join(root, pair.Config))
	if err != nil {
		return nil, err
	}
	gen, err := Translate(cfg)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Output, 0o755); err != nil {
		return nil, err
	}
	k, err := Prepare(ctx, o.KueueVersion, o.Log)
	if err != nil {
		return nil, err
	}
	// Both schedulers at the same client limits: beyond minimalkueue's
	// own, a copy patched to them.
	if k, err = k.WithClientLimits(ctx, o.QPS, o.Burst, o.Log); err != nil {
		return nil, err
	}
	notes := []string{pair.Note}
	kueueGen := ""
	if pair.KueueConfig != "" {
		kueueGen = k.Generator(pair.KueueConfig)
	}
	if kueueGen != "" {
		shipped, err := LoadGenerator(kueueGen)
		if err != nil {
			return nil, err
		}
		if err := Same(gen, shipped); err != nil {
			return nil, fmt.Errorf("%s does not translate to Kueue's %s: %w", pair.Config, kueueGen, err)
		}
		notes = append(notes, fmt.Sprintf("Kueue's generator: configs/%s/generator.yaml of %s@%s.", pair.KueueConfig, Module, k.Version))
	} else {
		kueueGen = filepath.Join(o.Output, "kueue-generator.yaml")
		if err := gen.Write(kueueGen); err != nil {
			return nil, err
		}
		if pair.KueueConfig != "" {
			notes = append(notes, fmt.Sprintf("%s@%s ships no configs/%s: Kueue's runner got the translation of %s (kueue-generator.yaml in the output).", Module, k.Version, pair.KueueConfig, pair.Config))
		}
	}
	assets, err := toolsDir(root)
	if err != nil {
		return nil, err
	}
	bin := o.OurBinary
	if bin == "" {
		bin = filepath.Join(o.Output, "koord-queue")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/koord-queue")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build ./cmd/koord-queue: %w\n%s", err, out)
		}
	}
	if err := os.Setenv("KUBEBUILDER_ASSETS", assets); err != nil {
		return nil, err
	}
	classes := make([]string, len(cfg.Classes))
	for i, c := range cfg.Classes {
		classes[i] = c.Name
	}
	ideal := cfg.IdealMakespan().Seconds
	var kf, of []Figures
	var commit, server string
	for i := range o.Runs {
		dir := filepath.Join(o.Output, fmt.Sprintf("kueue-%d", i+1))
		load := loadAverage()
		o.logf("round %d/%d: Kueue %s, %s (load %s)", i+1, o.Runs, k.Version, o.Pair, load)
		if err := k.Run(ctx, kueueGen, dir, assets, cfg.Timeout.Duration, o.Log); err != nil {
			return nil, err
		}
		f, err := ReadKueue(dir, classes, cfg.Children.Max.MilliValue(), ideal)
		if err != nil {
			return nil, fmt.Errorf("read Kueue's run %s: %w", dir, err)
		}
		kf = append(kf, f)
		notes = append(notes, fmt.Sprintf("Kueue run %d: load average %s at start, %s at end.", i+1, load, loadAverage()))
		if rs := k.RangeSpec(pair.KueueConfig); rs != "" && pair.KueueConfig != "" {
			passed, out := k.Check(ctx, dir, rs)
			if err := os.WriteFile(filepath.Join(dir, "checker.log"), []byte(out), 0o644); err != nil {
				return nil, err
			}
			notes = append(notes, fmt.Sprintf("Kueue run %d against Kueue's own rangespec (its checker): passed=%t.", i+1, passed))
		}

		dir = filepath.Join(o.Output, fmt.Sprintf("ours-%d", i+1))
		o.logf("round %d/%d: koord-queue, %s (load %s)", i+1, o.Runs, o.Pair, loadAverage())
		s, err := harness.Run(ctx, harness.Options{
			Config: cfg, OutputDir: dir, QPS: o.QPS, Burst: o.Burst, Binary: bin,
			ExtraArgs: o.OurArgs, Log: o.Log, Mode: harness.ModeKueue,
		})
		if err != nil {
			return nil, fmt.Errorf("our run %s: %w", dir, err)
		}
		if s.TimedOut {
			// Still tabulated: its completed units and wall time say how far it got.
			notes = append(notes, fmt.Sprintf("our run %d timed out after %s: %d of %d units completed.", i+1, cfg.Timeout.Duration, s.Completed, s.Units))
		}
		f, err = FromOurs(s)
		if err != nil {
			return nil, err
		}
		of = append(of, f)
		commit, server = s.Setup.Commit, s.Setup.ServerVersion
		notes = append(notes, fmt.Sprintf("our run %d: load average %s at start, %s at end.", i+1, s.Setup.LoadAverageStart, s.Setup.LoadAverageEnd))
	}
	t := Build(o.Pair, classes, kf, of)
	t.Notes = append([]string{
		fmt.Sprintf("Kueue %s (minimalkueue: QPS %g, burst %d) vs koord-queue %s (--qps %g --burst %d, mode kueue); kube-apiserver %s and etcd from %s for both; API server in-flight limits %d/%d for both; %d CPUs (%s); ideal %.2f s.",
			k.Version, o.QPS, o.Burst, commit, o.QPS, o.Burst, server, assets, harness.KueueMaxInflight, harness.KueueMaxMutatingInflight, runtime.NumCPU(), cpuModel(), ideal),
	}, notes...)
	if k.Patch != "" {
		t.Notes = append(t.Notes, "Kueue's side: "+k.Patch+".")
	}
	return &t, t.write(o.Output)
}

func (t Table) write(dir string) error {
	if err := os.WriteFile(filepath.Join(dir, "compare.md"), []byte(t.Markdown()), 0o644); err != nil {
		return err
	}
	y, err := yaml.Marshal(t)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "compare.yaml"), y, 0o644); err != nil {
		return err
	}
	j, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "compare.json"), j, 0o644)
}

func toolsDir(root string) (string, error) {
	if a := os.Getenv("KUBEBUILDER_ASSETS"); a != "" {
		return a, nil
	}
	out, err := exec.Command(filepath.Join(root, "hack", "tools.sh"), "dir").Output()
	if err != nil {
		return "", fmt.Errorf("hack/tools.sh dir: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// DefaultOutput is $HOME/.cache/koord-queue/perf/compare-<pair>-<time>.
func DefaultOutput(pair string) string {
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache", "koord-queue", "perf", "compare-"+pair+"-"+time.Now().Format("20060102-150405"))
}

// Tabulate rebuilds the table of a pair from the run folders already in dir
// (kueue-N, ours-N), for instance of a comparison stopped before its last
// round, and writes it there.
func Tabulate(pair, dir string) (*Table, error) {
	p, ok := Pairs[pair]
	if !ok {
		return nil, fmt.Errorf("unknown pair %q (known: %s)", pair, strings.Join(sortedKeys(Pairs), ", "))
	}
	cfg, err := harness.LoadConfig(filepath.Join(framework.RepoRoot(), p.Config))
	if err != nil {
		return nil, err
	}
	classes := make([]string, len(cfg.Classes))
	for i, c := range cfg.Classes {
		classes[i] = c.Name
	}
	ideal := cfg.IdealMakespan().Seconds
	var kf, of []Figures
	notes := []string{p.Note}
	for i := 1; ; i++ {
		kdir := filepath.Join(dir, fmt.Sprintf("kueue-%d", i))
		if _, err := os.Stat(filepath.Join(kdir, "minimalkueue.stats.yaml")); err != nil {
			break
		}
		f, err := ReadKueue(kdir, classes, cfg.Children.Max.MilliValue(), ideal)
		if err != nil {
			return nil, err
		}
		kf = append(kf, f)
		if b, err := os.ReadFile(filepath.Join(kdir, "checker.log")); err == nil {
			notes = append(notes, fmt.Sprintf("Kueue run %d against Kueue's own rangespec (its checker): passed=%t.", i, !strings.Contains(string(b), "--- FAIL")))
		}
	}
	for i := 1; ; i++ {
		data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("ours-%d", i), "summary.yaml"))
		if err != nil {
			break
		}
		s := &harness.Summary{}
		if err := yaml.Unmarshal(data, s); err != nil {
			return nil, fmt.Errorf("ours-%d/summary.yaml: %w", i, err)
		}
		f, err := FromOurs(s)
		if err != nil {
			return nil, err
		}
		of = append(of, f)
		notes = append(notes, fmt.Sprintf("our run %d (koord-queue %s, %s): load average %s at start, %s at end.", i, s.Setup.Commit, s.Setup.ServerVersion, s.Setup.LoadAverageStart, s.Setup.LoadAverageEnd))
	}
	if len(kf) == 0 || len(of) == 0 {
		return nil, fmt.Errorf("%s holds %d finished Kueue runs and %d of ours; need at least one of each", dir, len(kf), len(of))
	}
	t := Build(pair, classes, kf, of)
	t.Notes = notes
	return &t, t.write(dir)
}
