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

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/koordinator-sh/koord-queue/test/cluster"
)

// podRunTime is how long a Job's pod runs on a fake node. It must leave time
// to observe a second job waiting while the first runs.
const podRunTime = 8 * time.Second

// extensions are the job extensions the suite enables: every kind the guide
// has an example of. E2E_EXTENSIONS (comma-separated) overrides it, to run the
// rest of the suite while an extension does not exist yet. The run beside
// Koordinator leaves out extension pod: its plain-pod case is about a
// labelled bare pod koord-queue does not manage, which with that extension
// on it would queue.
func extensions() []string {
	if e := os.Getenv("E2E_EXTENSIONS"); e != "" {
		return strings.Split(e, ",")
	}
	if koordinatorOn() {
		return []string{"job", "tfjob", "pytorchjob", "mpijob", "workflow", "rayjob", "raycluster", "sparkapp", "jobset", "leaderworkerset", "trainjob"}
	}
	return []string{"job", "pod", "tfjob", "pytorchjob", "mpijob", "workflow", "rayjob", "raycluster", "sparkapp", "jobset", "leaderworkerset", "trainjob"}
}

// env is the cluster every test shares.
var env *cluster.Cluster

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func guide(name string) string {
	return filepath.Join(repoRoot(), "test", "testdata", "guide", name)
}

// toolsDir is KUBEBUILDER_ASSETS (the Makefile sets it) or what hack/tools.sh
// prints; a missing tool is reported by cluster.Start.
func toolsDir() (string, error) {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d, nil
	}
	out, err := exec.Command(filepath.Join(repoRoot(), "hack", "tools.sh"), "dir").Output()
	if err != nil {
		return "", fmt.Errorf("hack/tools.sh dir: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// operatorsDir is E2E_OPERATORS_DIR or what 'hack/tools.sh operators-dir'
// prints; the operator cases report a missing binary.
func operatorsDir() (string, error) {
	if d := os.Getenv("E2E_OPERATORS_DIR"); d != "" {
		return d, nil
	}
	out, err := exec.Command(filepath.Join(repoRoot(), "hack", "tools.sh"), "operators-dir").Output()
	if err != nil {
		return "", fmt.Errorf("hack/tools.sh operators-dir: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// koordinatorOn says whether the suite runs with Koordinator (E2E_KOORDINATOR=1):
// its CRDs, koord-manager and koord-scheduler in place of kube-scheduler.
func koordinatorOn() bool { return os.Getenv("E2E_KOORDINATOR") == "1" }

// koordinatorDir is E2E_KOORDINATOR_DIR or what 'hack/tools.sh
// koordinator-dir' prints; cluster.Start reports a missing binary.
func koordinatorDir() (string, error) {
	if d := os.Getenv("E2E_KOORDINATOR_DIR"); d != "" {
		return d, nil
	}
	out, err := exec.Command(filepath.Join(repoRoot(), "hack", "tools.sh"), "koordinator-dir").Output()
	if err != nil {
		return "", fmt.Errorf("hack/tools.sh koordinator-dir: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// schedulerConfig is koord-queue's --config in the suite.
const schedulerConfig = `apiVersion: scheduling.k8s.io/v1
kind: KoordQueueConfiguration
reclaimProtectionPeriod: ` + e2eProtection + `
`

// e2eProtection is the reclaim and preemption protection period of the suite.
const e2eProtection = "5s"

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	tools, err := toolsDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	opsDir, err := operatorsDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	stateDir, err := os.MkdirTemp("", "koord-queue-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	ports, err := cluster.FreePorts()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	var koord cluster.Koordinator
	if koordinatorOn() {
		if koord.BinDir, err = koordinatorDir(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "e2e: with Koordinator (E2E_KOORDINATOR=1) from %s\n", koord.BinDir)
	}
	// A short protection period, so the opt-in preemption case sees it end.
	configFile, err := os.CreateTemp("", "koord-queue-e2e-config-*.yaml")
	if err == nil {
		_, err = configFile.WriteString(schedulerConfig)
		if cerr := configFile.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: scheduler config:", err)
		return 1
	}
	config := configFile.Name()
	defer func() { _ = os.Remove(config) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env, err = cluster.Start(ctx, cluster.Options{
		StateDir:     stateDir,
		ToolsDir:     tools,
		Ports:        ports,
		PodRunTime:   podRunTime,
		OperatorsDir: opsDir,
		ExtraCRDDirs: []string{filepath.Join(repoRoot(), "test", "crds")},
		KoordQueue: cluster.KoordQueue{
			Mode:       cluster.KoordQueueOn,
			RepoRoot:   repoRoot(),
			Config:     config,
			Extensions: extensions(),
		},
		Koordinator:   koord,
		DieWithParent: true,
		Log:           os.Stderr,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: cannot start the local cluster: %v\n(logs in %s)\n", err, filepath.Join(stateDir, "logs"))
		return 1
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: stop cluster:", err)
		code = 1
	}
	if code != 0 || os.Getenv("E2E_KEEP_STATE") != "" {
		fmt.Fprintf(os.Stderr, "e2e: logs of every process kept in %s\n", filepath.Join(stateDir, "logs"))
	} else {
		_ = os.RemoveAll(stateDir)
	}
	return code
}
