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
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Kueue's minimalkueue sets its client limits in code, the only two lines
// a patched copy changes.
const (
	kueueQPS, kueueBurst = 50, 100
	qpsLine              = "kubeConfig.QPS = 50\n"
	burstLine            = "kubeConfig.Burst = 100\n"
)

// WithClientLimits returns k with a minimalkueue that uses the client
// limits qps and burst: k itself when they are minimalkueue's own (QPS 50,
// burst 100), else a patched build, made once into the cache
// (bin/minimalkueue-qps<QPS>-burst<BURST>/minimalkueue). It differs from Kueue's in the
// two lines that set kubeConfig.QPS and kubeConfig.Burst in its main.go,
// and nothing else. Go refuses to overlay files of the module cache, so the
// module is copied once into the tools cache (<version>/src) and built
// there with the patched main.go as an overlay; the module cache stays
// untouched and nothing is written into this repository.
func (k *Kueue) WithClientLimits(ctx context.Context, qps float32, burst int, log io.Writer) (*Kueue, error) {
	if qps == kueueQPS && burst == kueueBurst {
		return k, nil
	}
	if qps <= 0 || burst <= 0 {
		return nil, fmt.Errorf("client limits QPS %g, burst %d: both must be positive", qps, burst)
	}
	q := strconv.FormatFloat(float64(qps), 'f', -1, 32)
	name := fmt.Sprintf("minimalkueue-qps%s-burst%d", q, burst)
	bin, err := CacheDir(k.Version)
	if err != nil {
		return nil, err
	}
	patched := *k
	// Named minimalkueue still: Kueue's runner names its outputs after the
	// binary (minimalkueue.stats.yaml, its logs).
	patched.MinimalKueue = filepath.Join(bin, name, "minimalkueue")
	patched.Patch = fmt.Sprintf("minimalkueue built with %q and %q in %s/minimalkueue/main.go (go build -overlay), else Kueue's own",
		"kubeConfig.QPS = "+q, "kubeConfig.Burst = "+strconv.Itoa(burst), perfDir)
	if _, err := os.Stat(patched.MinimalKueue); err == nil {
		return &patched, nil
	}
	module, err := copyModule(k.ModuleDir, filepath.Join(filepath.Dir(bin), "src"))
	if err != nil {
		return nil, err
	}
	src := filepath.Join(module, perfDir, "minimalkueue", "main.go")
	orig, err := os.ReadFile(src)
	if err != nil {
		return nil, err
	}
	out, err := patchClientLimits(orig, q, burst)
	if err != nil {
		return nil, fmt.Errorf("patch %s: %w", src, err)
	}
	dir := filepath.Join(filepath.Dir(bin), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	mainGo := filepath.Join(dir, "main.go")
	if err := os.WriteFile(mainGo, out, 0o644); err != nil {
		return nil, err
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {src: mainGo}})
	if err != nil {
		return nil, err
	}
	overlayPath := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayPath, overlay, 0o644); err != nil {
		return nil, err
	}
	began := time.Now()
	cmd := exec.CommandContext(ctx, "go", "build", "-overlay", overlayPath, "-o", patched.MinimalKueue, "./"+perfDir+"/minimalkueue")
	cmd.Dir = module
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly")
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build the patched minimalkueue: %w\n%s", err, b)
	}
	if log != nil {
		fmt.Fprintf(log, "perf-compare: built %s in %s (%s)\n", patched.MinimalKueue, time.Since(began).Round(time.Second), patched.Patch)
	}
	return &patched, nil
}

// patchClientLimits replaces minimalkueue's two lines of client limits;
// an error when either is not there exactly once (another Kueue version).
func patchClientLimits(src []byte, qps string, burst int) ([]byte, error) {
	for _, line := range []string{qpsLine, burstLine} {
		if n := bytes.Count(src, []byte(line)); n != 1 {
			return nil, fmt.Errorf("%q appears %d times, not once: this Kueue version sets its client limits otherwise", strings.TrimSpace(line), n)
		}
	}
	out := bytes.Replace(src, []byte(qpsLine), []byte("kubeConfig.QPS = "+qps+"\n"), 1)
	return bytes.Replace(out, []byte(burstLine), []byte("kubeConfig.Burst = "+strconv.Itoa(burst)+"\n"), 1), nil
}

// copyModule copies the module at from to to once (a stamp file marks a
// finished copy) and returns to.
func copyModule(from, to string) (string, error) {
	stamp := filepath.Join(to, ".koord-queue-complete")
	if _, err := os.Stat(stamp); err == nil {
		return to, nil
	}
	if err := os.RemoveAll(to); err != nil {
		return "", err
	}
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		return "", fmt.Errorf("copy Kueue's module to %s: %w", to, err)
	}
	return to, os.WriteFile(stamp, nil, 0o644)
}
