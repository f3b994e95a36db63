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
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/koordinator-sh/koord-queue/test/util/proc"
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
	*proc.Process
	ref procRef
	// env and args are what it was started with, so it can be started again.
	env, args []string
}

// startProcessEnv runs binary with args and env added to the caller's
// environment, its output appended to logs/<name>.log (proc.Start: its own
// session, so a Ctrl-C on the caller's terminal does not reach it; with
// dieWithParent it is killed when the caller dies).
func startProcessEnv(stateDir, name, binary string, env, args []string, dieWithParent bool) (*process, error) {
	if _, err := os.Stat(binary); err != nil {
		return nil, fmt.Errorf("%s: binary %s not found: build it with 'hack/tools.sh %s'", name, binary, filepath.Base(binary))
	}
	logPath := filepath.Join(stateDir, "logs", name+".log")
	p, err := proc.Start(binary, args, proc.Options{Log: logPath, Append: true, Dir: stateDir, Env: env, DieWithParent: dieWithParent})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &process{
		Process: p,
		ref:     procRef{Name: name, PID: p.PID(), Binary: binary, Log: logPath},
		env:     env,
		args:    args,
	}, nil
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
