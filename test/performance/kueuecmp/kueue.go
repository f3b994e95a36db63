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
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/koordinator-sh/koord-queue/test/performance/harness"
	"github.com/koordinator-sh/koord-queue/test/util/proc"
)

// Module is Kueue's module path; DefaultVersion the pinned release.
const (
	Module         = "sigs.k8s.io/kueue"
	DefaultVersion = "v0.17.0"
	perfDir        = "test/performance/scheduler"
)

// Kueue is Kueue's module at one version and its built harness.
type Kueue struct {
	Version string
	// ModuleDir is the module's source in the Go module cache (read only).
	ModuleDir string
	// Runner, MinimalKueue and Checker are the built binaries.
	Runner, MinimalKueue, Checker string
	// Patch says how MinimalKueue differs from Kueue's; empty when it
	// does not (WithClientLimits).
	Patch string
}

// CacheDir is where the binaries of a version are kept:
// $HOME/.cache/koord-queue/kueue/<version>/bin.
func CacheDir(version string) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".cache", "koord-queue", "kueue", version, "bin"), nil
}

// Prepare downloads Kueue's module at version through the Go module proxy
// (go mod download) and builds its runner, minimalkueue and checker into the
// cache, unless they are there already. Errors carry the go command's
// output, so a module or dependency that does not resolve or build here is
// named.
func Prepare(ctx context.Context, version string, log io.Writer) (*Kueue, error) {
	tmp, err := os.MkdirTemp("", "kueue-download-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	// Outside any module, so our go.mod is left alone.
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", Module+"@"+version)
	cmd.Dir = tmp
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr != nil && err == nil {
		err = jerr
	}
	if err == nil && (info.Error != "" || info.Dir == "") {
		err = fmt.Errorf("no module folder: %s", info.Error)
	}
	if err != nil {
		return nil, fmt.Errorf("go mod download %s@%s: %w %s\n%s", Module, version, err, info.Error, stderr.String())
	}
	bin, err := CacheDir(version)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return nil, err
	}
	k := &Kueue{
		Version: version, ModuleDir: info.Dir,
		Runner: filepath.Join(bin, "performance-scheduler-runner"), MinimalKueue: filepath.Join(bin, "minimalkueue"), Checker: filepath.Join(bin, "checker"),
	}
	builds := []struct {
		out  string
		args []string
	}{
		{k.Runner, []string{"build", "-o", k.Runner, "./" + perfDir + "/runner"}},
		{k.MinimalKueue, []string{"build", "-o", k.MinimalKueue, "./" + perfDir + "/minimalkueue"}},
		// The checker is a Go test; its binary takes -summary -cmdStats -range.
		{k.Checker, []string{"test", "-c", "-o", k.Checker, "./" + perfDir + "/checker"}},
	}
	for _, b := range builds {
		if _, err := os.Stat(b.out); err == nil {
			continue
		}
		began := time.Now()
		cmd := exec.CommandContext(ctx, "go", b.args...)
		cmd.Dir = info.Dir
		// The module cache is read only; the module's go.sum must suffice.
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("build Kueue %s (go %s in %s): %w\n%s", version, strings.Join(b.args, " "), info.Dir, err, out)
		}
		if log != nil {
			fmt.Fprintf(log, "perf-compare: built %s in %s\n", b.out, time.Since(began).Round(time.Second))
		}
	}
	return k, nil
}

// Generator returns the path of one of Kueue's shipped generator configs
// (configs/<name>/generator.yaml), or "" when this version has none.
func (k *Kueue) Generator(name string) string {
	p := filepath.Join(k.ModuleDir, perfDir, "configs", name, "generator.yaml")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// RangeSpec returns the path of a shipped rangespec.yaml, or "".
func (k *Kueue) RangeSpec(name string) string {
	p := filepath.Join(k.ModuleDir, perfDir, "configs", name, "rangespec.yaml")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// Run runs Kueue's runner with minimalkueue in its own envtest control plane
// the way Kueue's `make run-performance-scheduler` does: logs to files at the
// runner's default level, metrics scraped every 5 s. assets is the envtest
// binaries folder (the same kube-apiserver and etcd as ours).
func (k *Kueue) Run(ctx context.Context, generator, out, assets string, timeout time.Duration, log io.Writer) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	args := []string{
		"--o", out,
		"--crds", filepath.Join(k.ModuleDir, "config", "components", "crd", "bases"),
		"--generatorConfig", generator,
		"--minimalKueue", k.MinimalKueue,
		"--withLogs=true", "--logToFile=true",
		"--metricsScrapeInterval=5s",
		"--timeout", timeout.String(),
	}
	logPath := filepath.Join(out, "runner.log")
	if log != nil {
		fmt.Fprintf(log, "perf-compare: Kueue %s runner %s\n", k.Version, strings.Join(args, " "))
	}
	p, err := proc.Start(k.Runner, args, proc.Options{Log: logPath, Env: []string{"KUBEBUILDER_ASSETS=" + assets}, DieWithParent: true})
	if err != nil {
		return err
	}
	// minimalkueue's own peak RSS: its cmd stats take rusage, which counts
	// the runner's peak before it started minimalkueue (harness.RSSPeak).
	rss := make(chan *harness.RSSPeak, 1)
	go func() { rss <- sampleChild(ctx, p.PID(), "minimalkueue", p.Done()) }()
	select {
	case <-p.Done():
	case <-ctx.Done():
		// SIGTERM first: the runner handles it and winds down its children.
		p.Stop(10 * time.Second)
		return fmt.Errorf("kueue runner: %w (log in %s)", ctx.Err(), logPath)
	}
	if err := p.Wait(); err != nil {
		return fmt.Errorf("kueue runner: %w (log in %s)", err, logPath)
	}
	return writeSampledRSS(filepath.Join(out, sampledRSSFile), <-rss)
}

// sampledRSSFile holds minimalkueue's VmHWM as sampled by Run.
const sampledRSSFile = "minimalkueue.vmhwm.json"

type sampledRSS struct {
	PeakRSSMiB float64 `json:"peakRSSMiB"`
	Samples    int     `json:"samples"`
}

// sampleChild finds the child of ppid named comm and follows its VmHWM
// until it exits; nil when none appeared before done.
func sampleChild(ctx context.Context, ppid int, comm string, done <-chan struct{}) *harness.RSSPeak {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if pid, ok := childNamed(ppid, comm); ok {
			peak := harness.SampleRSS(context.WithoutCancel(ctx), pid, 100*time.Millisecond)
			<-peak.Done()
			return peak
		}
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// childNamed is the pid of a process whose parent is ppid and whose command
// is comm, from /proc.
func childNamed(ppid int, comm string) (int, bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open || s[open+1:closing] != comm {
			continue
		}
		if f := strings.Fields(s[closing+1:]); len(f) > 1 && f[1] == strconv.Itoa(ppid) {
			return pid, true
		}
	}
	return 0, false
}

// writeSampledRSS records peak in path; nothing when no sample was taken.
func writeSampledRSS(path string, peak *harness.RSSPeak) error {
	if peak == nil {
		return nil
	}
	b, n := peak.Peak()
	if n == 0 {
		return nil
	}
	data, err := json.Marshal(sampledRSS{PeakRSSMiB: float64(b) / (1 << 20), Samples: n})
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// Check runs Kueue's checker on a run's outputs against a range file and
// returns whether it passed and its output.
func (k *Kueue) Check(ctx context.Context, out, rangeSpec string) (bool, string) {
	cmd := exec.CommandContext(ctx, k.Checker, "-test.v",
		"-summary", filepath.Join(out, "summary.yaml"), "-cmdStats", filepath.Join(out, "minimalkueue.stats.yaml"), "-range", rangeSpec)
	b, err := cmd.CombinedOutput()
	return err == nil, string(b)
}

// cmdStats is Kueue's minimalkueue.stats.yaml.
type cmdStats struct {
	WallMs int64 `json:"wallMs"`
	UserMs int64 `json:"userMs"`
	SysMs  int64 `json:"sysMs"`
	Maxrss int64 `json:"maxrss"`
}

// workload is one row of Kueue's wlStates.csv.
type workload struct {
	class                  string
	msToAdmitted, msToDone int64
	evictions              int
}

// ReadKueue computes a run's figures from Kueue's runner outputs in dir:
// minimalkueue.stats.yaml (wall, CPU, max RSS), wlStates.csv (per workload
// ms to its last admission, ms to finish, evictions), cqStates.csv (max CPU
// use per queue, checked against nominal + borrowingLimit = queueMax milli
// CPU) and the last scrape in metricsDump.tgz (writes by method). ideal is
// the config's quota-bound makespan.
func ReadKueue(dir string, classes []string, queueMaxMilli int64, ideal float64) (Figures, error) {
	var f Figures
	data, err := os.ReadFile(filepath.Join(dir, "minimalkueue.stats.yaml"))
	if err != nil {
		return f, err
	}
	var st cmdStats
	if err := yaml.UnmarshalStrict(data, &st); err != nil {
		return f, fmt.Errorf("minimalkueue.stats.yaml: %w", err)
	}
	wls, err := readWorkloads(filepath.Join(dir, "wlStates.csv"))
	if err != nil {
		return f, err
	}
	byClass := map[string][]int64{}
	for _, w := range wls {
		f.Units++
		byClass[w.class] = append(byClass[w.class], w.msToAdmitted)
		f.Evictions += w.evictions
		if w.msToDone > 0 {
			f.Completed++
			// Every eviction ended an admission; the last one finished.
			f.Admissions += 1 + w.evictions
		} else {
			f.Admissions += w.evictions
		}
	}
	f.WallSeconds = float64(st.WallMs) / 1000
	f.CPUSeconds = float64(st.UserMs+st.SysMs) / 1000
	f.RusagePeakRSSMiB = float64(st.Maxrss) / 1024
	f.PeakRSSMiB = f.RusagePeakRSSMiB
	if data, err := os.ReadFile(filepath.Join(dir, sampledRSSFile)); err == nil {
		var sampled sampledRSS
		if err := json.Unmarshal(data, &sampled); err != nil {
			return f, fmt.Errorf("%s: %w", sampledRSSFile, err)
		}
		f.PeakRSSMiB = round(sampled.PeakRSSMiB, 1)
	}
	f.TimeToAdmission = waits(classes, byClass)
	if f.QuotaViolations, err = readViolations(filepath.Join(dir, "cqStates.csv"), queueMaxMilli); err != nil {
		return f, err
	}
	writes, err := lastScrapeWrites(filepath.Join(dir, "metricsDump.tgz"))
	if err != nil {
		return f, err
	}
	f.finish(writes, ideal)
	return f, nil
}

func readCSV(path string, header string) ([][]string, map[string]int, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close()
	rows, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("%s is empty", path)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, h := range strings.Split(header, ",") {
		if _, ok := col[h]; !ok {
			return nil, nil, fmt.Errorf("%s: no column %q (has %v)", path, h, rows[0])
		}
	}
	return rows[1:], col, nil
}

func readWorkloads(path string) ([]workload, error) {
	rows, col, err := readCSV(path, "class name,ms to admitted,ms to finish,num evictions")
	if err != nil {
		return nil, err
	}
	var out []workload
	for i, r := range rows {
		var w workload
		var err1, err2, err3 error
		w.class = r[col["class name"]]
		w.msToAdmitted, err1 = strconv.ParseInt(r[col["ms to admitted"]], 10, 64)
		w.msToDone, err2 = strconv.ParseInt(r[col["ms to finish"]], 10, 64)
		w.evictions, err3 = strconv.Atoi(r[col["num evictions"]])
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("%s row %d: %w", path, i+2, err)
		}
		out = append(out, w)
	}
	return out, nil
}

// readViolations counts queues whose highest CPU use went above their max.
// Kueue's recorder sees only queue-level use, so a cohort above its capacity
// is not visible here.
func readViolations(path string, queueMaxMilli int64) (int, error) {
	rows, col, err := readCSV(path, "name,CPU max usage (mCPU)")
	if err != nil {
		return 0, err
	}
	n := 0
	for i, r := range rows {
		v, err := strconv.ParseInt(r[col["CPU max usage (mCPU)"]], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s row %d: %w", path, i+2, err)
		}
		if v > queueMaxMilli {
			n++
		}
	}
	return n, nil
}

// lastScrapeWrites reads the newest <unix ms>.prometheus file of the tarball.
func lastScrapeWrites(path string) (map[string]float64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	gz, err := gzip.NewReader(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tr := tar.NewReader(gz)
	var lastTS int64 = -1
	var last []byte
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			// The runner may stop mid-entry; keep what was complete.
			if last != nil {
				break
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		ts, err := strconv.ParseInt(strings.TrimSuffix(filepath.Base(h.Name), ".prometheus"), 10, 64)
		if err != nil {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			break
		}
		if ts > lastTS {
			lastTS, last = ts, b
		}
	}
	if last == nil {
		return nil, fmt.Errorf("%s holds no scrape", path)
	}
	return parseWrites(last)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
