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

package cluster

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// state is what state.json records: enough for another program to find and
// stop every process of the cluster.
type state struct {
	Kubeconfig string    `json:"kubeconfig"`
	Ports      Ports     `json:"ports"`
	Processes  []procRef `json:"processes"`
}

// procRef identifies a started process; Binary guards against stopping an
// unrelated process that reused the PID.
type procRef struct {
	Name   string `json:"name"`
	PID    int    `json:"pid"`
	Binary string `json:"binary"`
	Log    string `json:"log"`
}

func statePath(dir string) string { return filepath.Join(dir, "state.json") }

func readState(dir string) (*state, error) {
	data, err := os.ReadFile(statePath(dir))
	if err != nil {
		return nil, err
	}
	s := &state{}
	if err := json.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("read %s: %w", statePath(dir), err)
	}
	return s, nil
}

func writeState(dir string, s *state) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := statePath(dir) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, statePath(dir))
}

// process is a child started by this program.
type process struct {
	ref  procRef
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // exit status, valid after done
	// env and args are what it was started with, so it can be started again.
	env, args []string
}

// startProcessEnv runs binary with args and env added to the caller's
// environment, its output appended to logs/<name>.log. The child gets its
// own session so a Ctrl-C on the caller's terminal does not reach it; with
// dieWithParent it is killed when the caller dies.
func startProcessEnv(stateDir, name, binary string, env, args []string, dieWithParent bool) (*process, error) {
	closeInheritedOnExec()
	if _, err := os.Stat(binary); err != nil {
		return nil, fmt.Errorf("%s: binary %s not found: build it with 'hack/tools.sh %s'", name, binary, filepath.Base(binary))
	}
	logPath := filepath.Join(stateDir, "logs", name+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	fmt.Fprintf(logFile, "### %s %s %s\n", time.Now().Format(time.RFC3339), binary, strings.Join(args, " "))
	cmd := exec.Command(binary, args...)
	cmd.Dir = stateDir
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if dieWithParent {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{
		ref:  procRef{Name: name, PID: cmd.Process.Pid, Binary: binary, Log: logPath},
		cmd:  cmd,
		done: make(chan struct{}),
		env:  env,
		args: args,
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// closeInheritedOnExec marks every descriptor above stderr close-on-exec.
// Go opens its own files so, but one this program inherited (the lock of a
// caller's `flock`, say) would otherwise pass to the cluster's processes and
// be held for as long as they run.
func closeInheritedOnExec() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// alive reports whether ref's process still runs (a zombie counts as gone).
func alive(ref procRef) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", ref.PID))
	if err != nil {
		return false
	}
	// The state letter follows the command name in parentheses.
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
		if s := stat[i+2]; s == 'Z' || s == 'X' {
			return false
		}
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", ref.PID))
	if err != nil {
		// Not ours to inspect: trust the PID only if the command line matches.
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", ref.PID))
		return err == nil && strings.HasPrefix(string(cmdline), ref.Binary)
	}
	return strings.TrimSuffix(exe, " (deleted)") == ref.Binary
}

// stopRef sends SIGTERM, waits up to grace for the process to exit, then
// kills it and waits again. It returns an error only if the process outlives
// SIGKILL.
func stopRef(ref procRef, grace time.Duration) error {
	if !alive(ref) {
		return nil
	}
	_ = syscall.Kill(ref.PID, syscall.SIGTERM)
	if waitGone(ref, grace) {
		return nil
	}
	_ = syscall.Kill(ref.PID, syscall.SIGKILL)
	if waitGone(ref, 10*time.Second) {
		return nil
	}
	return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", ref.Name, ref.PID)
}

func waitGone(ref procRef, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !alive(ref) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return !alive(ref)
}

// checkPortsFree fails with a message naming the first port in use and the
// option that moves it.
func checkPortsFree(p *Ports, skip func(portUse) bool) error {
	for _, u := range p.uses() {
		if *u.port == 0 || (skip != nil && skip(u)) {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(*u.port)))
		if err != nil {
			return fmt.Errorf("port %d for %s is already in use (by another process; choose another with %s, or stop the old cluster with 'make down'): %w",
				*u.port, u.what, u.flag, err)
		}
		_ = l.Close()
	}
	return nil
}

// waitPortsFree waits until the ports a stopped cluster used can be bound
// again.
func waitPortsFree(p *Ports, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := checkPortsFree(p, nil)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tail returns the last lines of a log file, for error messages.
func tail(path string, lines int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
