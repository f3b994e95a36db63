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
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/koordinator-sh/koord-queue/test/util/proc"
)

// Koordinator runs Koordinator v1.7.0 beside koord-queue: its CRDs (its
// ElasticQuota CRD in place of ours), koord-manager with its webhooks on
// loopback, and koord-scheduler as the cluster's scheduler instead of
// kube-scheduler.
type Koordinator struct {
	// BinDir holds koord-manager and koord-scheduler (`hack/tools.sh
	// koordinator-dir`); empty means Koordinator is off.
	BinDir string
	// ModuleDir is Koordinator's Go module (its config/ folder); empty means
	// found with `go list -m` in KoordQueue.RepoRoot's hack/koordinator.
	ModuleDir string
}

// On says whether Koordinator runs.
func (k Koordinator) On() bool { return k.BinDir != "" }

// Koordinator's fixed names.
const (
	KoordinatorNamespace = "koordinator-system"
	koordinatorModule    = "github.com/koordinator-sh/koordinator"
	// KoordSchedulerDebugPort is where koord-scheduler serves its debug HTTP
	// API whatever its flags: only one cluster with Koordinator can run on a
	// machine at a time.
	KoordSchedulerDebugPort = 10251
)

// KoordinatorSystemQuotas are the quotas koord-scheduler creates in
// KoordinatorNamespace when it starts.
var KoordinatorSystemQuotas = []string{"koordinator-root-quota", "koordinator-system-quota", "koordinator-default-quota"}

// koordinatorPodWebhooks are Koordinator's pod webhooks, failurePolicy
// Ignore as Koordinator's chart sets them; its quota webhooks stay Fail.
var koordinatorPodWebhooks = map[string]bool{
	"mpod-create.koordinator.sh": true,
	"mpod-update.koordinator.sh": true,
	"vpod.koordinator.sh":        true,
}

// KoordinatorModuleDir prints where the Koordinator module of
// hack/koordinator is (downloading it if needed).
func KoordinatorModuleDir(ctx context.Context, repoRoot string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", koordinatorModule)
	cmd.Dir = filepath.Join(repoRoot, "hack", "koordinator")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		return "", fmt.Errorf("find module %s (in %s): %w %s", koordinatorModule, cmd.Dir, err, stderr)
	}
	return strings.TrimSpace(string(out)), nil
}

// prepareKoordinator checks the binaries, the module and port 10251.
func (c *Cluster) prepareKoordinator(ctx context.Context) error {
	k := &c.opts.Koordinator
	if !k.On() {
		return nil
	}
	for _, b := range []string{"koord-manager", "koord-scheduler"} {
		if _, err := os.Stat(filepath.Join(k.BinDir, b)); err != nil {
			return fmt.Errorf("%s not found in %s: build it with 'hack/tools.sh koord-manager koord-scheduler'", b, k.BinDir)
		}
	}
	if k.ModuleDir == "" {
		if c.opts.KoordQueue.RepoRoot == "" {
			return errors.New("Koordinator: set Koordinator.ModuleDir or KoordQueue.RepoRoot (to find its module)")
		}
		dir, err := KoordinatorModuleDir(ctx, c.opts.KoordQueue.RepoRoot)
		if err != nil {
			return err
		}
		k.ModuleDir = dir
	}
	if _, err := os.Stat(filepath.Join(k.ModuleDir, "config", "crd", "bases")); err != nil {
		return fmt.Errorf("install the CRDs of Koordinator: %w", err)
	}
	return checkKoordSchedulerPort()
}

func checkKoordSchedulerPort() error {
	l, err := net.Listen("tcp", ":"+strconv.Itoa(KoordSchedulerDebugPort))
	if err != nil {
		return fmt.Errorf("port %d, which koord-scheduler always listens on, is already in use: only one cluster with Koordinator can run at a time (stop the other one, e.g. 'make down'): %w",
			KoordSchedulerDebugPort, err)
	}
	return l.Close()
}

// waitKoordSchedulerPortFree waits until a stopped koord-scheduler's port can
// be bound again.
func waitKoordSchedulerPortFree(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := checkKoordSchedulerPort()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// koordinatorCRDDir is Koordinator's CRD folder.
func (c *Cluster) koordinatorCRDDir() string {
	return filepath.Join(c.opts.Koordinator.ModuleDir, "config", "crd", "bases")
}

// startKoordinator creates Koordinator's namespace and webhook
// configurations, starts koord-manager and waits until its quota webhook
// answers, then starts koord-scheduler and waits for its system quotas.
func (c *Cluster) startKoordinator(ctx context.Context) error {
	if !c.opts.Koordinator.On() {
		return nil
	}
	began := time.Now()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: KoordinatorNamespace}}
	if err := c.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", KoordinatorNamespace, err)
	}
	if err := c.installKoordinatorWebhooks(ctx); err != nil {
		return err
	}
	ports, err := proc.FreePorts(4)
	if err != nil {
		return err
	}
	loop := func(p int) string { return "127.0.0.1:" + strconv.Itoa(p) }
	certDir := filepath.Join(c.opts.StateDir, "koordinator-webhook-certs")
	manager, err := c.runEnv("koord-manager", filepath.Join(c.opts.Koordinator.BinDir, "koord-manager"),
		[]string{
			"KUBECONFIG=" + c.Kubeconfig,
			"WEBHOOK_HOST=127.0.0.1",
			"WEBHOOK_PORT=" + strconv.Itoa(ports[0]),
			"WEBHOOK_CERT_DIR=" + certDir,
			"POD_NAMESPACE=" + KoordinatorNamespace,
		},
		"--kubeconfig", c.Kubeconfig,
		"--enable-leader-election=false",
		"--metrics-addr", loop(ports[1]),
		"--health-probe-addr", loop(ports[2]),
		"--pprof-addr", loop(ports[3]),
		"--config-namespace", KoordinatorNamespace,
	)
	if err != nil {
		return err
	}
	if err := c.waitFor(ctx, "koord-manager's ElasticQuota webhook", 2*time.Minute, c.quotaWebhookAnswers, manager); err != nil {
		return err
	}
	cfg, err := c.writeKoordSchedulerConfig()
	if err != nil {
		return err
	}
	sched, err := c.run("koord-scheduler", filepath.Join(c.opts.Koordinator.BinDir, "koord-scheduler"),
		"--config", cfg,
		"--secure-port", "0",
	)
	if err != nil {
		return err
	}
	if err := c.waitFor(ctx, "koord-scheduler's system quotas", 2*time.Minute, c.systemQuotasExist, sched, manager); err != nil {
		return err
	}
	c.logf("Koordinator (koord-manager, koord-scheduler) ready in %s", time.Since(began).Round(100*time.Millisecond))
	return nil
}

// installKoordinatorWebhooks creates Koordinator's two webhook configurations
// as its kustomization does (manifests.yaml with patch_manifests.yaml, names
// prefixed koordinator-); koord-manager points them at itself and injects its CA.
func (c *Cluster) installKoordinatorWebhooks(ctx context.Context) error {
	dir := filepath.Join(c.opts.Koordinator.ModuleDir, "config", "webhook")
	base, err := ReadObjects(filepath.Join(dir, "manifests.yaml"))
	if err != nil {
		return fmt.Errorf("install the webhooks of Koordinator: %w", err)
	}
	patches, err := ReadObjects(filepath.Join(dir, "patch_manifests.yaml"))
	if err != nil {
		return fmt.Errorf("patch the webhooks of Koordinator: %w", err)
	}
	for _, u := range base {
		name := u.GetName()
		var patch map[string]map[string]any
		for _, p := range patches {
			if p.GetKind() == u.GetKind() && p.GetName() == name {
				patch = webhooksByName(p)
			}
		}
		hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
		for i, h := range hooks {
			m, ok := h.(map[string]any)
			if !ok {
				return fmt.Errorf("webhook configuration %s of Koordinator: a webhook is not an object", name)
			}
			hookName, _ := m["name"].(string)
			for k, v := range patch[hookName] {
				if k != "name" {
					m[k] = v
				}
			}
			if koordinatorPodWebhooks[hookName] {
				m["failurePolicy"] = "Ignore"
			}
			if err := unstructured.SetNestedField(m, KoordinatorNamespace, "clientConfig", "service", "namespace"); err != nil {
				return err
			}
			if err := unstructured.SetNestedField(m, "koordinator-webhook-service", "clientConfig", "service", "name"); err != nil {
				return err
			}
			hooks[i] = m
		}
		if err := unstructured.SetNestedSlice(u.Object, hooks, "webhooks"); err != nil {
			return err
		}
		u.SetName("koordinator-" + name)
		if err := c.Client.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}

func webhooksByName(u *unstructured.Unstructured) map[string]map[string]any {
	out := map[string]map[string]any{}
	hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
	for _, h := range hooks {
		if m, ok := h.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				out[n] = m
			}
		}
	}
	return out
}

func elasticQuota(namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("scheduling.sigs.k8s.io/v1alpha1")
	u.SetKind("ElasticQuota")
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// quotaWebhookAnswers is a poll condition: a dry-run ElasticQuota reaches
// koord-manager's quota webhook (allowed, or denied by the webhook itself;
// not "failed calling webhook").
func (c *Cluster) quotaWebhookAnswers(ctx context.Context) (bool, error) {
	eq := elasticQuota(KoordinatorNamespace, "koord-queue-webhook-probe")
	if err := unstructured.SetNestedStringMap(eq.Object, map[string]string{"cpu": "1"}, "spec", "max"); err != nil {
		return false, err
	}
	if err := unstructured.SetNestedStringMap(eq.Object, map[string]string{"cpu": "0"}, "spec", "min"); err != nil {
		return false, err
	}
	err := c.Client.Create(ctx, eq, client.DryRunAll)
	if err == nil {
		return true, nil
	}
	if strings.Contains(err.Error(), "failed calling webhook") {
		return false, err
	}
	if strings.Contains(err.Error(), "denied the request") {
		return true, nil
	}
	return false, err
}

// systemQuotasExist is a poll condition: koord-scheduler made its three
// system quotas.
func (c *Cluster) systemQuotasExist(ctx context.Context) (bool, error) {
	for _, name := range KoordinatorSystemQuotas {
		if err := c.Client.Get(ctx, keyOf(KoordinatorNamespace, name), elasticQuota("", "")); err != nil {
			return false, fmt.Errorf("quota %s/%s: %w", KoordinatorNamespace, name, err)
		}
	}
	return true, nil
}

// writeKoordSchedulerConfig writes koord-scheduler's configuration: the one of
// Koordinator's config/manager/scheduler-config.yaml, its profile renamed
// default-scheduler (it replaces kube-scheduler), without leader election,
// talking through the admin kubeconfig.
func (c *Cluster) writeKoordSchedulerConfig() (string, error) {
	src := filepath.Join(c.opts.Koordinator.ModuleDir, "config", "manager", "scheduler-config.yaml")
	objs, err := ReadObjects(src)
	if err != nil {
		return "", fmt.Errorf("read koord-scheduler's configuration %s: %w", src, err)
	}
	if len(objs) != 1 {
		return "", fmt.Errorf("read koord-scheduler's configuration %s: want one ConfigMap, found %d objects", src, len(objs))
	}
	text, ok, _ := unstructured.NestedString(objs[0].Object, "data", "koord-scheduler-config")
	if !ok {
		return "", fmt.Errorf("%s has no data.koord-scheduler-config", src)
	}
	cfg := map[string]any{}
	if err := yaml.Unmarshal([]byte(text), &cfg); err != nil {
		return "", fmt.Errorf("decode %s: %w", src, err)
	}
	if err := unstructured.SetNestedField(cfg, false, "leaderElection", "leaderElect"); err != nil {
		return "", err
	}
	if err := unstructured.SetNestedField(cfg, c.Kubeconfig, "clientConnection", "kubeconfig"); err != nil {
		return "", err
	}
	if err := unstructured.SetNestedField(cfg, int64(200), "clientConnection", "qps"); err != nil {
		return "", err
	}
	if err := unstructured.SetNestedField(cfg, int64(400), "clientConnection", "burst"); err != nil {
		return "", err
	}
	profiles, _, _ := unstructured.NestedSlice(cfg, "profiles")
	if len(profiles) != 1 {
		return "", fmt.Errorf("%s: want one scheduler profile, found %d", src, len(profiles))
	}
	p, ok := profiles[0].(map[string]any)
	if !ok {
		return "", fmt.Errorf("%s: the profile is not an object", src)
	}
	p["schedulerName"] = corev1.DefaultSchedulerName
	if err := unstructured.SetNestedSlice(cfg, []any{p}, "profiles"); err != nil {
		return "", err
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return "", err
	}
	path := filepath.Join(c.opts.StateDir, "koord-scheduler-config.yaml")
	return path, os.WriteFile(path, out, 0o600)
}
