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
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RSSPeak follows a process's peak resident set, VmHWM of
// /proc/<pid>/status, from its start until it has exited.
//
// The kernel's count for an exited child (wait4's ru_maxrss, what Kueue's
// cmd stats and os.ProcessState give) cannot be used: Go starts a child
// with clone(CLONE_VFORK|CLONE_VM), so the child runs on its parent's
// memory map until exec, and exec records that map's high-water mark as the
// child's. A child started by a parent that once held 580 MiB reports at
// least 580 MiB, whatever it used itself (TestRusageCountsTheParent).
// VmHWM is the high-water mark of the process's own map since exec.
type RSSPeak struct {
	mu      sync.Mutex
	bytes   int64
	samples int
	done    chan struct{}
}

// SampleRSS reads pid's VmHWM every period until the process has exited
// (its status is gone, or holds no memory map: a zombie) or ctx ends.
func SampleRSS(ctx context.Context, pid int, period time.Duration) *RSSPeak {
	p := &RSSPeak{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			b, err := vmHWM(pid)
			if err != nil {
				return
			}
			p.mu.Lock()
			p.bytes, p.samples = max(p.bytes, b), p.samples+1
			p.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// Done is closed once sampling has stopped.
func (p *RSSPeak) Done() <-chan struct{} { return p.done }

// Peak is the largest VmHWM read so far and how many reads were made.
func (p *RSSPeak) Peak() (bytes int64, samples int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bytes, p.samples
}

// vmHWM is pid's VmHWM in bytes; an error when the process is gone or has
// no memory map any more.
func vmHWM(pid int) (int64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/%d/status: VmHWM %q: %w", pid, rest, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no VmHWM (exited)", pid)
}
