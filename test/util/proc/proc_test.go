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
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// start runs a shell script; cleanup kills its whole session, so a child
// the script left behind does not outlive the test.
func start(t *testing.T, script string, o Options) *Process {
	t.Helper()
	if o.Log == "" {
		o.Log = filepath.Join(t.TempDir(), "logs", "sh.log")
	}
	p, err := Start("/bin/sh", []string{"-c", script}, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-p.PID(), syscall.SIGKILL)
		_ = p.Wait()
	})
	return p
}

func signalOf(t *testing.T, err error) syscall.Signal {
	t.Helper()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("exit error = %v, want one from a signal", err)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() {
		t.Fatalf("exit status %v, want death by a signal", ws)
	}
	return ws.Signal()
}

func readLog(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestStartLogsExitStatusAndTimes(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "logs", "sh.log")
	p := start(t, `echo "out $FOO"; echo err >&2; pwd; exit 3`, Options{Log: logPath, Dir: dir, Env: []string{"FOO=bar"}})
	if p.Wall() != 0 || p.State() != nil {
		t.Errorf("before the exit: wall %v, state %v; want 0, nil", p.Wall(), p.State())
	}
	err := p.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("Wait = %v, want exit status 3", err)
	}
	if gone, eerr := p.Exited(); !gone || !errors.Is(eerr, err) {
		t.Errorf("Exited = %v, %v", gone, eerr)
	}
	if p.Wall() <= 0 || p.State() == nil || p.State().ExitCode() != 3 {
		t.Errorf("after the exit: wall %v, state %v", p.Wall(), p.State())
	}
	log := readLog(t, logPath)
	if want := "out bar\nerr\n" + dir + "\n"; log != want {
		t.Errorf("log = %q, want %q", log, want)
	}
}

func TestStartAppendsOrTruncates(t *testing.T) {
	log := filepath.Join(t.TempDir(), "a.log")
	for range 2 {
		if err := start(t, "echo run", Options{Log: log, Append: true}).Wait(); err != nil {
			t.Fatal(err)
		}
	}
	got := readLog(t, log)
	if strings.Count(got, "### ") != 2 || strings.Count(got, "\nrun\n") != 2 || !strings.Contains(got, "/bin/sh -c echo run") {
		t.Errorf("appended log = %q, want two headed runs", got)
	}
	if err := start(t, "echo once", Options{Log: log}).Wait(); err != nil {
		t.Fatal(err)
	}
	if got := readLog(t, log); got != "once\n" {
		t.Errorf("truncated log = %q, want %q", got, "once\n")
	}
}

func TestStartFailsForMissingBinary(t *testing.T) {
	_, err := Start(filepath.Join(t.TempDir(), "nope"), nil, Options{Log: filepath.Join(t.TempDir(), "x.log")})
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("Start = %v, want an error naming the binary", err)
	}
}

func TestStopTermsThenKills(t *testing.T) {
	// Waits on its own child so SIGTERM ends the shell at once.
	obeys := start(t, "sleep 60 & wait", Options{})
	began := time.Now()
	obeys.Stop(time.Minute)
	if took := time.Since(began); took > 30*time.Second {
		t.Errorf("Stop of a process that obeys SIGTERM took %v", took)
	}
	if sig := signalOf(t, obeys.Wait()); sig != syscall.SIGTERM {
		t.Errorf("ended by %v, want SIGTERM", sig)
	}

	ignores := start(t, `trap "" TERM; echo ready; sleep 60 & wait`, Options{})
	waitForLog(t, ignores, "ready")
	ignores.Stop(200 * time.Millisecond)
	if sig := signalOf(t, ignores.Wait()); sig != syscall.SIGKILL {
		t.Errorf("ended by %v, want SIGKILL after the grace", sig)
	}
	ignores.Stop(time.Minute) // stopping an exited process returns at once
}

// A fatal signal ends a paused process anyway; one that handles SIGTERM
// (as the cluster's servers do) must be continued to run its handler.
func TestStopResumesAPausedProcess(t *testing.T) {
	p := start(t, `trap "exit 7" TERM; echo ready; sleep 60 & wait`, Options{})
	waitForLog(t, p, "ready")
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	p.Stop(time.Minute)
	var ee *exec.ExitError
	if err := p.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Errorf("Wait = %v, want exit status 7 from the SIGTERM handler", err)
	}
}

func TestKill(t *testing.T) {
	p := start(t, "sleep 60 & wait", Options{})
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if gone, err := p.Exited(); !gone || signalOf(t, err) != syscall.SIGKILL {
		t.Errorf("after Kill: exited %v, %v", gone, err)
	}
}

// waitForLog polls the log until it holds s, so a signal is not sent
// before the script has set its traps.
func waitForLog(t *testing.T, p *Process, s string) {
	t.Helper()
	name := p.cmd.Stdout.(*os.File).Name()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(readLog(t, name), s) {
		if time.Now().After(deadline) {
			t.Fatalf("%q never appeared in %s", s, name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestAliveAndStopPID(t *testing.T) {
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	p := start(t, "sleep 60 & wait", Options{})
	if !Alive(p.PID(), sh) {
		t.Fatalf("Alive(%d, %s) = false for a running process", p.PID(), sh)
	}
	if Alive(p.PID(), "/not/this/binary") {
		t.Error("Alive is true for a PID running another binary")
	}
	if err := StopPID(p.PID(), sh, time.Minute); err != nil {
		t.Fatal(err)
	}
	if Alive(p.PID(), sh) {
		t.Error("still alive after StopPID")
	}
	if sig := signalOf(t, p.Wait()); sig != syscall.SIGTERM {
		t.Errorf("ended by %v, want SIGTERM", sig)
	}
	if err := StopPID(p.PID(), sh, time.Minute); err != nil {
		t.Errorf("StopPID of a gone process = %v", err)
	}
}

func TestFreePorts(t *testing.T) {
	ports, err := FreePorts(5)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, port := range ports {
		if port <= 0 || seen[port] {
			t.Errorf("ports %v: %d is invalid or repeated", ports, port)
		}
		if port >= ephemeralLow() {
			t.Errorf("port %d is in the kernel's ephemeral range (from %d): an outgoing connection may take it", port, ephemeralLow())
		}
		seen[port] = true
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Errorf("port %d is not free: %v", port, err)
			continue
		}
		_ = l.Close()
	}
	if port, err := FreePort(); err != nil || port <= 0 {
		t.Errorf("FreePort = %d, %v", port, err)
	}
}
