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
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/koordinator-sh/koord-queue/pkg/util/mutation"
	"github.com/koordinator-sh/koord-queue/test/util/proc"
)

// The koord-queue binaries, as built from cmd/.
const (
	QueueBinary       = "koord-queue"
	ControllersBinary = "koord-queue-controllers"
)

// KoordQueueBuildable reports whether the checkout has both main packages
// (a folder with Go files under cmd/ for each binary).
func KoordQueueBuildable(repoRoot string) bool {
	for _, b := range []string{QueueBinary, ControllersBinary} {
		files, _ := filepath.Glob(filepath.Join(repoRoot, "cmd", b, "*.go"))
		if len(files) == 0 {
			return false
		}
	}
	return true
}

// PluginBinary is the kubectl plugin, built beside the two binaries when the
// checkout has it, so that `kubectl koord-queue` works with the bin folder on
// PATH.
const PluginBinary = "kubectl-koord_queue"

// WebViewPath is where kube-apiserver (and so `kubectl proxy`) serves the
// web view that replica 0 runs (--visibility-ui).
const WebViewPath = "/apis/visibility.koord-queue.x-k8s.io/v1alpha1/ui/"

// BuildKoordQueue builds both binaries (and the kubectl plugin when present)
// from repoRoot into outDir, with the build tags given.
func BuildKoordQueue(ctx context.Context, repoRoot, outDir string, tags ...string) error {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	pkgs := []string{"./cmd/" + QueueBinary, "./cmd/" + ControllersBinary}
	if files, _ := filepath.Glob(filepath.Join(repoRoot, "cmd", PluginBinary, "*.go")); len(files) > 0 {
		pkgs = append(pkgs, "./cmd/"+PluginBinary)
	}
	args := []string{"build", "-o", outDir + string(os.PathSeparator)}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkgs...)...)
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build %s: %w\n%s", strings.Join(pkgs, " "), err, out)
	}
	return nil
}

func (c *Cluster) startKoordQueue(ctx context.Context) error {
	kq := c.opts.KoordQueue
	switch {
	case kq.Mode == KoordQueueOff:
		return nil
	case kq.RepoRoot == "":
		return fmt.Errorf("KoordQueue.RepoRoot is not set: the koord-queue binaries are built from a checkout")
	case !KoordQueueBuildable(kq.RepoRoot):
		if kq.Mode == KoordQueueAuto {
			c.logf("cmd/%s or cmd/%s does not exist yet: running without koord-queue", QueueBinary, ControllersBinary)
			return nil
		}
		return fmt.Errorf("cmd/%s and cmd/%s are needed in %s", QueueBinary, ControllersBinary, kq.RepoRoot)
	}
	c.BinDir = filepath.Join(c.opts.StateDir, "bin")
	began := time.Now()
	c.logf("building %s and %s", QueueBinary, ControllersBinary)
	var tags []string
	if kq.Mutation != "" {
		tags = append(tags, "chaosmutation")
		c.logf("planting the bug %q in both binaries", kq.Mutation)
	}
	if err := BuildKoordQueue(ctx, kq.RepoRoot, c.BinDir, tags...); err != nil {
		return err
	}
	c.logf("built in %s", time.Since(began).Round(100*time.Millisecond))

	var queue0 *process
	for i := range kq.QueueReplicas {
		p, err := c.startQueueReplica(ctx, i)
		if err != nil {
			return err
		}
		if i == 0 {
			queue0 = p
		}
	}
	if err := c.installWebhook(ctx, kq.Extensions); err != nil {
		return err
	}
	for i := range kq.ControllersReplicas {
		if _, err := c.startControllersReplica(ctx, i); err != nil {
			return err
		}
	}
	if err := c.registerVisibility(ctx, queue0); err != nil {
		return err
	}
	c.QueueRunning = true
	return nil
}

// ReplicaName is the process (and, with several replicas, API user) name of
// the i-th replica of binary: the binary's name for replica 0, so a single
// replica keeps the names it always had, else "<binary>-<i>".
func ReplicaName(binary string, i int) string {
	if i == 0 {
		return binary
	}
	return binary + "-" + strconv.Itoa(i)
}

// replicaKubeconfig is the kubeconfig a replica uses: the admin's for a
// single replica, else one of the replica's own user.
func (c *Cluster) replicaKubeconfig(binary, name string) string {
	if c.replicasOf(binary) > 1 {
		return filepath.Join(c.opts.StateDir, "kubeconfig-"+name)
	}
	return c.Kubeconfig
}

func (c *Cluster) replicasOf(binary string) int {
	if binary == QueueBinary {
		return c.opts.KoordQueue.QueueReplicas
	}
	return c.opts.KoordQueue.ControllersReplicas
}

// addReplicaUsers gives every replica of a binary run in several replicas a
// user and a kubeconfig of its own. The user acts as the binary's
// ServiceAccount in namespace koord-queue with the extra of a token bound to
// a pod named like the replica (authentication.kubernetes.io/pod-name), as a
// pod's projected token does: the chart's RBAC and leader fences apply to it,
// while the audit log still names the replica's own user.
func (c *Cluster) addReplicaUsers() error {
	for _, binary := range []string{QueueBinary, ControllersBinary} {
		n := c.replicasOf(binary)
		if n <= 1 {
			continue
		}
		for i := range n {
			name := ReplicaName(binary, i)
			token, err := c.pki.addUser(name)
			if err != nil {
				return fmt.Errorf("add user %s: %w", name, err)
			}
			as := &clientcmdapi.AuthInfo{
				Impersonate:          "system:serviceaccount:" + Namespace + ":" + binary,
				ImpersonateUserExtra: map[string][]string{PodNameExtra: {name}},
			}
			server := c.apiURL()
			if c.opts.KoordQueue.Links {
				via, err := c.addWay(name)
				if err != nil {
					return err
				}
				server = via
			}
			if err := c.writeKubeconfigVia(c.replicaKubeconfig(binary, name), server, name, token, as); err != nil {
				return err
			}
		}
	}
	return nil
}

// addWay puts a proxy (StallWatch) and in front of it a link (Cut) between
// replica name and kube-apiserver, and returns the URL the replica uses:
// replica -> link -> proxy -> API server, so a cut holds the replica's
// bytes before the proxy reads them, as it did without one.
func (c *Cluster) addWay(name string) (string, error) {
	target, err := url.Parse(c.apiURL())
	if err != nil {
		return "", err
	}
	cas, err := certPool(c.pki.caCert)
	if err != nil {
		return "", err
	}
	// The API server's own serving certificate, which names 127.0.0.1.
	p, err := newAPIProxy(target, cas, c.pki.servingCert, c.pki.servingKey)
	if err != nil {
		return "", fmt.Errorf("proxy of %s: %w", name, err)
	}
	if c.proxies == nil {
		c.proxies = map[string]*apiProxy{}
	}
	c.proxies[name] = p
	l, err := newLink(p.addr())
	if err != nil {
		return "", fmt.Errorf("link of %s: %w", name, err)
	}
	if c.links == nil {
		c.links = map[string]*link{}
	}
	c.links[name] = l
	return "https://" + l.addr(), nil
}

// PodNameExtra is the user extra by which a pod-bound ServiceAccount token
// names its pod; the leader fences compare it with the Lease's holder.
const PodNameExtra = "authentication.kubernetes.io/pod-name"

// replicaEnv is the environment of replica name: with several replicas, its
// pod name (POD_NAME), which begins its leader identity.
func (c *Cluster) replicaEnv(binary, name string) []string {
	var env []string
	if c.replicasOf(binary) > 1 {
		env = append(env, "POD_NAME="+name)
	}
	if m := c.opts.KoordQueue.Mutation; m != "" {
		env = append(env, mutation.EnvVar+"="+string(m))
	}
	return env
}

// replicaPort is fixed for replica 0 and picked free for the others.
func replicaPort(i, fixed int) (int, error) {
	if i == 0 {
		return fixed, nil
	}
	p, err := proc.FreePorts(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

func (c *Cluster) startQueueReplica(ctx context.Context, i int) (*process, error) {
	kq := c.opts.KoordQueue
	name := ReplicaName(QueueBinary, i)
	metricsPort, err := replicaPort(i, c.opts.Ports.QueueMetrics)
	if err != nil {
		return nil, err
	}
	args := []string{
		"--kubeconfig", c.replicaKubeconfig(QueueBinary, name),
		"--leader-elect=" + strconv.FormatBool(kq.QueueReplicas > 1),
		"--metrics-bind-address", "127.0.0.1:" + strconv.Itoa(metricsPort),
		// A local cluster on loopback: plain HTTP that curl, the tests and the
		// dashboard check scrape without a token.
		"--metrics-secure=false",
	}
	if i == 0 {
		// The visibility aggregated API, registered as the chart does.
		args = append(args,
			"--enableVisibilityServer",
			"--visibility-bind-address", "127.0.0.1:"+strconv.Itoa(c.opts.Ports.Visibility),
			"--visibility-cert-dir", c.pki.visibilityDir,
			// The web view, reached through kube-apiserver (WebViewPath).
			"--visibility-ui")
	}
	if kq.Config != "" {
		args = append(args, "--config", kq.Config)
	}
	if kq.DebugAPI {
		// A port of its own, kept by Restart (which reuses the arguments).
		port, err := proc.FreePorts(1)
		if err != nil {
			return nil, err
		}
		addr := "127.0.0.1:" + strconv.Itoa(port[0])
		args = append(args, "--enableApiHandler", "--api-handler-address", addr)
		if c.debugURLs == nil {
			c.debugURLs = map[string]string{}
		}
		c.debugURLs[name] = "http://" + addr
	}
	p, err := c.runEnv(name, filepath.Join(c.BinDir, QueueBinary), c.replicaEnv(QueueBinary, name), append(args, kq.ExtraQueueArgs...)...)
	if err != nil {
		return nil, err
	}
	c.setReady(name, httpOK(fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)))
	return p, c.waitReady(ctx, name, p)
}

func (c *Cluster) startControllersReplica(ctx context.Context, i int) (*process, error) {
	kq := c.opts.KoordQueue
	name := ReplicaName(ControllersBinary, i)
	metricsPort, err := replicaPort(i, c.opts.Ports.ControllersMetrics)
	if err != nil {
		return nil, err
	}
	healthPort, err := replicaPort(i, c.opts.Ports.ControllersHealth)
	if err != nil {
		return nil, err
	}
	args := []string{
		"--kubeconfig", c.replicaKubeconfig(ControllersBinary, name),
		"--leader-elect=" + strconv.FormatBool(kq.ControllersReplicas > 1),
		"--enabled-extensions", strings.Join(kq.Extensions, ","),
		"--metrics-bind-address", "127.0.0.1:" + strconv.Itoa(metricsPort),
		"--metrics-secure=false",
		"--health-probe-bind-address", "127.0.0.1:" + strconv.Itoa(healthPort),
	}
	if i == 0 {
		args = append(args, c.webhookArgs()...)
	} else {
		// One webhook port, held by replica 0 (its failurePolicy is Ignore,
		// and the backstop holds what slips through while it is down).
		args = append(args, "--webhook-port", "0", "--release-namespace", Namespace)
	}
	p, err := c.runEnv(name, filepath.Join(c.BinDir, ControllersBinary), c.replicaEnv(ControllersBinary, name), append(args, kq.ExtraControllersArgs...)...)
	if err != nil {
		return nil, err
	}
	c.setReady(name, httpOK(fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort)))
	return p, c.waitReady(ctx, name, p)
}

// DebugURL is the base URL of the debug HTTP API of koord-queue replica
// name, when KoordQueue.DebugAPI is set.
func (c *Cluster) DebugURL(name string) (string, bool) {
	u, ok := c.debugURLs[name]
	return u, ok
}
