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
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
	"github.com/koordinator-sh/koord-queue/test/util/proc"
)

// Tools are the binaries the cluster needs from Options.ToolsDir.
var Tools = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "kubectl"}

// marker marks a directory as a cluster state directory, so Start never wipes
// a folder it did not make.
const marker = ".koord-queue-local-cluster"

const serviceIP = "10.96.0.1"

// Cluster is a running local cluster.
type Cluster struct {
	// Kubeconfig is the admin kubeconfig (token of a system:masters user).
	Kubeconfig string
	// Kubectl is the kubectl built for this Kubernetes version.
	Kubectl   string
	Config    *rest.Config
	Client    client.Client
	Clientset kubernetes.Interface
	// QueueRunning says whether the koord-queue binaries were started.
	QueueRunning bool
	// BinDir holds the koord-queue binaries and the kubectl plugin
	// kubectl-koord_queue, once built.
	BinDir string

	opts      Options
	pki       *pki
	procs     []*process
	state     state
	operators []Operator // started by StartOperators
	// operatorWebhooks holds, by operator, the webhook URLs it must serve
	// before it is ready (see replaceWebhookConfigs).
	operatorWebhooks map[Operator][]webhookEndpoint
	// ready holds, by process name, how to tell that a (re)started process
	// serves (see Restart).
	ready map[string]func(context.Context) (bool, error)
	// auditReader reads the audit log on for Leader; holders maps
	// "<lease>/<holder identity>" to the user that wrote it.
	auditReader *AuditReader
	holders     map[string]string
	// debugURLs maps a koord-queue replica to its debug API (KoordQueue.DebugAPI).
	debugURLs map[string]string
	// links are the replicas' own ways to the API server (KoordQueue.Links),
	// each in front of the replica's proxy.
	links   map[string]*link
	proxies map[string]*apiProxy
}

// Start brings up a fresh cluster in opts.StateDir. A cluster already
// recorded there is stopped first and its state wiped, so Start always begins
// clean. On error everything it started is stopped again.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	opts.setDefaults()
	c := &Cluster{opts: opts}
	if err := c.prepare(); err != nil {
		return nil, err
	}
	if err := c.prepareKoordinator(ctx); err != nil {
		return nil, err
	}
	if err := c.start(ctx); err != nil {
		c.logf("start failed; stopping what was started (logs stay in %s)", filepath.Join(opts.StateDir, "logs"))
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) logf(format string, args ...any) {
	fmt.Fprintf(c.opts.Log, "cluster: "+format+"\n", args...)
}

// Options returns the options the cluster runs with, defaults filled in.
func (c *Cluster) Options() Options { return c.opts }

// prepare checks the tools, stops a previous cluster of the same state
// directory, checks the ports and lays out a clean state directory.
func (c *Cluster) prepare() error {
	o := &c.opts
	if o.ToolsDir == "" {
		return errors.New("no tools directory: set ToolsDir (or --tools-dir) to the folder 'hack/tools.sh dir' prints")
	}
	for _, t := range Tools {
		if _, err := os.Stat(filepath.Join(o.ToolsDir, t)); err != nil {
			return fmt.Errorf("%s not found in %s: build the tools with 'hack/tools.sh' (or 'make tools')", t, o.ToolsDir)
		}
	}
	c.Kubectl = filepath.Join(o.ToolsDir, "kubectl")
	if _, err := readState(o.StateDir); err == nil {
		c.logf("a cluster is recorded in %s: stopping it first", o.StateDir)
		if err := Down(o.StateDir, o.Log); err != nil {
			return err
		}
	}
	if err := checkPortsFree(&o.Ports, nil); err != nil {
		return err
	}
	if entries, err := os.ReadDir(o.StateDir); err == nil && len(entries) > 0 {
		if _, err := os.Stat(filepath.Join(o.StateDir, marker)); err != nil {
			return fmt.Errorf("state directory %s is not empty and was not made by this package: choose another", o.StateDir)
		}
		if err := os.RemoveAll(o.StateDir); err != nil {
			return fmt.Errorf("clean state directory: %w", err)
		}
	}
	if err := os.MkdirAll(filepath.Join(o.StateDir, "logs"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.StateDir, marker), nil, 0o600); err != nil {
		return err
	}
	c.state = state{Ports: o.Ports}
	return nil
}

func (c *Cluster) start(ctx context.Context) error {
	began := time.Now()
	var err error
	if c.pki, err = newPKI(filepath.Join(c.opts.StateDir, "pki")); err != nil {
		return fmt.Errorf("make certificates: %w", err)
	}
	if err := c.writeKubeconfig(); err != nil {
		return err
	}
	if err := c.addReplicaUsers(); err != nil {
		return err
	}
	if err := c.startEtcd(ctx); err != nil {
		return err
	}
	if err := c.startAPIServer(ctx); err != nil {
		return err
	}
	if err := c.startControllers(); err != nil {
		return err
	}
	if err := c.createNodes(ctx); err != nil {
		return err
	}
	if err := c.waitWorkloadReady(ctx); err != nil {
		return err
	}
	c.logf("Kubernetes ready in %s", time.Since(began).Round(100*time.Millisecond))
	if err := c.install(ctx); err != nil {
		return err
	}
	if err := c.startKoordinator(ctx); err != nil {
		return err
	}
	if err := c.startKoordQueue(ctx); err != nil {
		return err
	}
	if err := c.StartOperators(ctx, c.opts.Operators...); err != nil {
		return err
	}
	c.logf("up in %s; logs in %s", time.Since(began).Round(100*time.Millisecond), filepath.Join(c.opts.StateDir, "logs"))
	return nil
}

func (c *Cluster) apiURL() string {
	return "https://127.0.0.1:" + strconv.Itoa(c.opts.Ports.APIServer)
}

// writeUserKubeconfig writes a kubeconfig for user (with token) at path.
func (c *Cluster) writeUserKubeconfig(path, user, token string) error {
	return c.writeUserKubeconfigAs(path, user, token, nil)
}

// writeUserKubeconfigAs is writeUserKubeconfig acting as as's Impersonate
// user, with its extras, when as is set.
func (c *Cluster) writeUserKubeconfigAs(path, user, token string, as *clientcmdapi.AuthInfo) error {
	return c.writeKubeconfigVia(path, c.apiURL(), user, token, as)
}

// writeKubeconfigVia writes a kubeconfig for user that reaches the API
// server at server (its own address, or a link to it).
func (c *Cluster) writeKubeconfigVia(path, server, user, token string, as *clientcmdapi.AuthInfo) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["koord-queue-local"] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: c.pki.caCert}
	auth := &clientcmdapi.AuthInfo{Token: token}
	if as != nil {
		auth.Impersonate, auth.ImpersonateGroups, auth.ImpersonateUserExtra = as.Impersonate, as.ImpersonateGroups, as.ImpersonateUserExtra
	}
	kc.AuthInfos[user] = auth
	kc.Contexts["koord-queue-local"] = &clientcmdapi.Context{Cluster: "koord-queue-local", AuthInfo: user}
	kc.CurrentContext = "koord-queue-local"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}

func (c *Cluster) writeKubeconfig() error {
	c.Kubeconfig = filepath.Join(c.opts.StateDir, "kubeconfig")
	if err := c.writeUserKubeconfig(c.Kubeconfig, adminUser, c.pki.token); err != nil {
		return err
	}
	c.state.Kubeconfig = c.Kubeconfig
	c.Config = &rest.Config{
		Host:            c.apiURL(),
		BearerToken:     c.pki.token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: c.pki.caCert},
		QPS:             200,
		Burst:           400,
	}
	var err error
	if c.Client, err = client.New(c.Config, client.Options{Scheme: scheme.New()}); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	if c.Clientset, err = kubernetes.NewForConfig(c.Config); err != nil {
		return fmt.Errorf("clientset: %w", err)
	}
	return nil
}

// run starts one process and records it in state.json before anything else
// can fail, so Down always finds it.
func (c *Cluster) run(name, binary string, args ...string) (*process, error) {
	return c.runEnv(name, binary, nil, args...)
}

func (c *Cluster) tool(name string) string { return filepath.Join(c.opts.ToolsDir, name) }

// waitFor polls cond until it holds, failing early with the process's log
// when one of procs exits.
func (c *Cluster) waitFor(ctx context.Context, what string, timeout time.Duration, cond func(context.Context) (bool, error), procs ...*process) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		for _, p := range procs {
			if gone, perr := p.Exited(); gone {
				return false, fmt.Errorf("%s exited (%w) while waiting for %s; last lines of %s:\n%s", p.ref.Name, perr, what, p.ref.Log, tail(p.ref.Log, 20))
			}
		}
		ok, err := cond(ctx)
		last = err
		return ok, nil
	})
	if err != nil {
		if last != nil {
			return fmt.Errorf("waiting for %s: %w (last error: %w)", what, err, last)
		}
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	return nil
}

// Stop stops every process of the cluster, waits for them to exit and for
// their ports to be free, and forgets the state. Logs stay.
func (c *Cluster) Stop() error {
	var errs []error
	defer func() { _ = c.closeLinks(); _ = c.closeProxies() }()
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].Stop(10 * time.Second)
	}
	c.procs = nil
	if err := waitPortsFree(&c.opts.Ports, 10*time.Second); err != nil {
		errs = append(errs, err)
	}
	if c.opts.Koordinator.On() {
		if err := waitKoordSchedulerPortFree(10 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.Remove(statePath(c.opts.StateDir)); err != nil && !os.IsNotExist(err) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Down stops the cluster recorded in stateDir by the PIDs in its state.json
// (processes in reverse start order), waits until they and their ports are
// gone, and removes state.json. A directory without a cluster is not an error.
func Down(stateDir string, log interface{ Write([]byte) (int, error) }) error {
	s, err := readState(stateDir)
	if os.IsNotExist(err) {
		fmt.Fprintf(log, "cluster: no cluster recorded in %s\n", stateDir)
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	koordScheduler := false
	for i := len(s.Processes) - 1; i >= 0; i-- {
		ref := s.Processes[i]
		koordScheduler = koordScheduler || ref.Name == "koord-scheduler"
		if !proc.Alive(ref.PID, ref.Binary) {
			continue
		}
		fmt.Fprintf(log, "cluster: stopping %s (pid %d)\n", ref.Name, ref.PID)
		if err := proc.StopPID(ref.PID, ref.Binary, 15*time.Second); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", ref.Name, err))
		}
	}
	if err := waitPortsFree(&s.Ports, 15*time.Second); err != nil {
		errs = append(errs, err)
	}
	if koordScheduler {
		if err := waitKoordSchedulerPortFree(15 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		if err := os.Remove(statePath(stateDir)); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
