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

package framework

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
)

// RepoRoot is the repository's top folder, found from this file's path.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// CRDPaths are the folders of CRDs every test control plane gets.
func CRDPaths() []string {
	root := RepoRoot()
	return []string{
		filepath.Join(root, "config", "crd", "bases"),
		filepath.Join(root, "config", "crd", "elasticquota"),
		filepath.Join(root, "test", "crds"),
		mpiJobCRD(root),
		jobSetCRD(root),
		lwsCRD(root),
		trainerCRDs(root),
	}
}

// mpiJobCRD, jobSetCRD and lwsCRD are CRDs in the modules koord-queue builds
// against (the mpi-operator's, JobSet's, LeaderWorkerSet's), found through the module cache (never
// copied into the repo).
func mpiJobCRD(root string) string {
	return moduleFile(root, "github.com/kubeflow/mpi-operator", "manifests", "base", "kubeflow.org_mpijobs.yaml")
}

func jobSetCRD(root string) string {
	return moduleFile(root, "sigs.k8s.io/jobset", "config", "components", "crd", "bases", "jobset.x-k8s.io_jobsets.yaml")
}

func lwsCRD(root string) string {
	return moduleFile(root, "sigs.k8s.io/lws", "config", "crd", "bases", "leaderworkerset.x-k8s.io_leaderworkersets.yaml")
}

// trainerCRDs is the folder of the Kubeflow Trainer v2 CRDs (TrainJob and
// both kinds of training runtime) in its module.
func trainerCRDs(root string) string {
	return moduleFile(root, "github.com/kubeflow/trainer/v2", "manifests", "base", "crds")
}

// moduleFile is a file of a module the main module requires. When the module
// cannot be resolved the path names the failure, and envtest's missing-path
// error shows it.
func moduleFile(root, module string, elem ...string) string {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		return fmt.Sprintf("%s module not resolved (go list -m: %v)", module, err)
	}
	return filepath.Join(append([]string{string(bytes.TrimSpace(out))}, elem...)...)
}

// Env is a running control plane.
type Env struct {
	Config    *rest.Config
	Client    client.Client
	Clientset kubernetes.Interface
	// ServerVersion is what the API server says it is.
	ServerVersion string

	env *envtest.Environment
	// tmp holds files Start wrote (front-proxy certificates); Stop removes it.
	tmp string
}

// Start brings up etcd and kube-apiserver from KUBEBUILDER_ASSETS and installs
// the CRDs. Options add to the API server's configuration (WithAggregator).
func Start(opts ...Option) (*Env, error) {
	var sc startConfig
	for _, o := range opts {
		o(&sc)
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		return nil, fmt.Errorf("KUBEBUILDER_ASSETS is not set: run the tests with 'make test', or build the binaries with 'hack/tools.sh etcd kube-apiserver' and point KUBEBUILDER_ASSETS at the folder it prints")
	}
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(assets, bin)); err != nil {
			return nil, fmt.Errorf("%s not found in KUBEBUILDER_ASSETS=%s: build it with 'hack/tools.sh %s'", bin, assets, bin)
		}
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     CRDPaths(),
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}
	// Load tests create thousands of objects; the defaults throttle them.
	apiServer := env.ControlPlane.GetAPIServer()
	inflight, mutating := 2000, 1000
	if sc.maxInflight > 0 {
		inflight, mutating = sc.maxInflight, sc.maxMutatingInflight
	}
	apiServer.Configure().Set("max-requests-inflight", strconv.Itoa(inflight)).Set("max-mutating-requests-inflight", strconv.Itoa(mutating))
	var tmp string
	if sc.aggregator {
		var err error
		if tmp, err = os.MkdirTemp("", "koord-queue-envtest-"); err != nil {
			return nil, err
		}
		if err := configureAggregator(apiServer, tmp); err != nil {
			_ = os.RemoveAll(tmp)
			return nil, fmt.Errorf("configure the aggregator: %w", err)
		}
	}
	cfg, err := env.Start()
	if err != nil {
		// The control plane may be up already (CRDs are installed after
		// it starts): stop it rather than leave it running.
		_ = env.Stop()
		if tmp != "" {
			_ = os.RemoveAll(tmp)
		}
		return nil, fmt.Errorf("start envtest control plane: %w", err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	e := &Env{Config: cfg, env: env, tmp: tmp}
	if e.Client, err = client.New(cfg, client.Options{Scheme: scheme.New()}); err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("client: %w", err)
	}
	if e.Clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("clientset: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("discovery: %w", err)
	}
	v, err := dc.ServerVersion()
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("server version: %w", err)
	}
	e.ServerVersion = v.GitVersion
	fmt.Fprintf(os.Stderr, "integration: real kube-apiserver %s at %s (etcd and kube-apiserver from %s)\n", v.GitVersion, cfg.Host, assets)
	return e, nil
}

// Stop shuts the control plane down.
func (e *Env) Stop() error {
	err := e.env.Stop()
	if e.tmp != "" {
		_ = os.RemoveAll(e.tmp)
	}
	return err
}

// UserKubeconfig adds a user authenticated by client certificate, in the given
// groups only (none: no RBAC at all), and returns a kubeconfig and rest.Config
// for it.
func (e *Env) UserKubeconfig(name string, groups ...string) ([]byte, *rest.Config, error) {
	user, err := e.env.ControlPlane.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("add user %s: %w", name, err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig of %s: %w", name, err)
	}
	return data, user.Config(), nil
}

// WriteKubeconfig writes a kubeconfig for the admin user of this control plane,
// for kubectl and for binaries started as separate processes.
func (e *Env) WriteKubeconfig(path string) error {
	user, err := e.env.ControlPlane.AddUser(envtest.User{Name: "koord-queue-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("add admin user: %w", err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	return os.WriteFile(path, data, 0o600)
}

// Eventually polls cond every 50ms until it is true or timeout passes, and
// returns the last error cond gave.
func Eventually(ctx context.Context, timeout time.Duration, cond func(context.Context) (bool, error)) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok && err == nil, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("%w: last error: %w", err, last)
	}
	return err
}

// RunSuite is a whole TestMain: it starts a control plane into *env, runs the
// package's tests, stops it, and returns the exit code for os.Exit.
func RunSuite(m interface{ Run() int }, env **Env, opts ...Option) int {
	e, err := Start(opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*env = e
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop control plane:", err)
	}
	return code
}
