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

package proc

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// Alive reports whether process pid runs binary (a zombie counts as gone).
// The binary guards against a PID reused by an unrelated process.
func Alive(pid int, binary string) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state letter follows the command name in parentheses.
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
		if s := stat[i+2]; s == 'Z' || s == 'X' {
			return false
		}
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		// Not ours to inspect: trust the PID only if the command line matches.
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		return err == nil && strings.HasPrefix(string(cmdline), binary)
	}
	return strings.TrimSuffix(exe, " (deleted)") == binary
}

// StopPID stops a process that need not be a child of this one (a cluster
// another program started): SIGTERM, SIGKILL when it still runs after grace.
// It returns an error only if the process outlives SIGKILL by 10 s.
func StopPID(pid int, binary string, grace time.Duration) error {
	if !Alive(pid, binary) {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	if waitGone(pid, binary, grace) {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if waitGone(pid, binary, 10*time.Second) {
		return nil
	}
	return fmt.Errorf("pid %d (%s) did not exit after SIGKILL", pid, binary)
}

// waitGone polls: a process that is not our child cannot be waited for.
func waitGone(pid int, binary string, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !Alive(pid, binary) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return !Alive(pid, binary)
}
