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
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Options say how Start runs a process.
type Options struct {
	// Log receives the process's stdout and stderr; its folder is created.
	// With Append the file keeps what it holds and gets a line naming the
	// command first (a restarted process shares its log); without, it is
	// truncated.
	Log    string
	Append bool
	// Dir is the working directory; empty is the caller's.
	Dir string
	// Env is added to the caller's environment.
	Env []string
	// DieWithParent kills the process (SIGKILL) when the caller dies.
	DieWithParent bool
}

// Process is a child started by Start.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{}
	// err is the exit status and exitedAt when the exit was seen, both
	// valid once done is closed; started is just after the start.
	err               error
	started, exitedAt time.Time
}

// Start runs binary with args. The child gets its own session, so a Ctrl-C
// on the caller's terminal does not reach it; the caller decides when it
// stops.
func Start(binary string, args []string, o Options) (*Process, error) {
	closeInheritedOnExec()
	if err := os.MkdirAll(filepath.Dir(o.Log), 0o755); err != nil {
		return nil, err
	}
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if o.Append {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	log, err := os.OpenFile(o.Log, flags, 0o644)
	if err != nil {
		return nil, err
	}
	// The child holds its own descriptor once started.
	defer log.Close()
	if o.Append {
		fmt.Fprintf(log, "### %s %s %s\n", time.Now().Format(time.RFC3339), binary, strings.Join(args, " "))
	}
	cmd := exec.Command(binary, args...)
	cmd.Dir = o.Dir
	if len(o.Env) > 0 {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if o.DieWithParent {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", binary, err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{}), started: time.Now()}
	go func() {
		p.err = cmd.Wait()
		p.exitedAt = time.Now()
		close(p.done)
	}()
	return p, nil
}

// closeInheritedOnExec marks every descriptor above stderr close-on-exec.
// Go opens its own files so, but one this program inherited (the lock of a
// caller's `flock`, say) would otherwise pass to the children and be held
// for as long as they run.
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

// PID is the process's ID.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has ended, and its exit status (nil
// for 0).
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// Wait waits for the exit and returns the exit status.
func (p *Process) Wait() error {
	<-p.done
	return p.err
}

// Signal sends sig.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Kill sends SIGKILL and waits for the exit.
func (p *Process) Kill() error {
	if err := p.cmd.Process.Kill(); err != nil {
		return err
	}
	<-p.done
	return nil
}

// Stop sends SIGTERM (after SIGCONT: a paused process cannot stop), then
// SIGKILL when it still runs after grace, and waits for the exit.
func (p *Process) Stop(grace time.Duration) {
	if gone, _ := p.Exited(); gone {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Wall is the time from the start to the exit, 0 while it runs.
func (p *Process) Wall() time.Duration {
	if gone, _ := p.Exited(); !gone {
		return 0
	}
	return p.exitedAt.Sub(p.started)
}

// State is the exited process's state (CPU times, rusage), nil while it runs.
func (p *Process) State() *os.ProcessState {
	if gone, _ := p.Exited(); !gone {
		return nil
	}
	return p.cmd.ProcessState
}
