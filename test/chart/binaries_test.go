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

package chart

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// runBinaries runs koord-queue and koord-queue-controllers, each with the
// arguments of its rendered Deployment and a kubeconfig with a token of its
// ServiceAccount, and plays the guide's quick start: an ElasticQuota, its
// Queue created by koord-queue, a suspended Job whose QueueUnit the
// controllers create, admitted by koord-queue and resumed by the controllers.
// Every call the binaries make on the way goes through the chart's RBAC.
//
// The binaries are the ones in binDir (taken out of the images, say), or,
// when binDir is empty, built from the source here.
func runBinaries(t *testing.T, env *framework.Env, r *Rendered, binDir string) {
	ctx := t.Context()
	dir := t.TempDir()
	if binDir == "" {
		binDir = dir
		// The flags of make images (static, -trimpath), so that the two share
		// their compiled packages in the build cache.
		build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", dir+string(os.PathSeparator), "./cmd/koord-queue", "./cmd/koord-queue-controllers")
		build.Dir = framework.RepoRoot()
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}

	// koord-queue: the Deployment's args, with the ConfigMap's file and a free port.
	cm := &corev1.ConfigMap{}
	r.Into(t, "ConfigMap", "koord-queue-config", cm)
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte(cm.Data["config.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	sched := container(t, r.deployment(t, "koord-queue"), "controller").Args
	sched = replaceFlag(sched, "config", config)
	schedMetrics := freeAddr(t)
	sched = replaceFlag(sched, "metrics-bind-address", schedMetrics)
	// The visibility flags come with the visibility server; this run needs neither.
	sched = dropFlag(dropFlag(dropFlag(dropFlag(sched, "enableVisibilityServer"), "visibility-bind-address"), "visibility-cert-dir"), "visibility-ui")
	sched = append(sched, "--kubeconfig="+saKubeconfig(t, env.Config, schedulerSA, dir))
	schedLog := filepath.Join(dir, "koord-queue.log")
	stopSched := start(t, filepath.Join(binDir, "koord-queue"), sched, schedLog)

	ctrl := container(t, r.deployment(t, "koord-queue-controllers"), "manager").Args
	ctrl = replaceFlag(ctrl, "enabled-extensions", "job")
	ctrlMetrics := freeAddr(t)
	ctrl = replaceFlag(ctrl, "metrics-bind-address", ctrlMetrics)
	ctrl = replaceFlag(ctrl, "health-probe-bind-address", freeAddr(t))
	// The webhook on loopback, its certificate also good for 127.0.0.1.
	webhookAddr := freeAddr(t)
	_, webhookPort, _ := net.SplitHostPort(webhookAddr)
	ctrl = replaceFlag(ctrl, "webhook-port", webhookPort)
	ctrl = append(ctrl, "--webhook-host=127.0.0.1", "--webhook-cert-hosts=127.0.0.1")
	ctrl = append(ctrl, "--kubeconfig="+saKubeconfig(t, env.Config, controllersSA, dir))
	ctrlLog := filepath.Join(dir, "koord-queue-controllers.log")
	stopCtrl := start(t, filepath.Join(binDir, "koord-queue-controllers"), ctrl, ctrlLog)

	c := env.Client
	four := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}
	eq := &eqv1alpha1.ElasticQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "team-a", Namespace: "default", Labels: map[string]string{
			"quota.scheduling.koordinator.sh/parent": "", "quota.scheduling.koordinator.sh/is-parent": "false",
		}},
		Spec: eqv1alpha1.ElasticQuotaSpec{Min: four, Max: four},
	}
	if err := c.Create(ctx, eq); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "koord-queue to create Queue koord-queue/team-a", time.Minute, func(ctx context.Context) (bool, error) {
		return get(ctx, c, Namespace, "team-a", &schedv1alpha1.Queue{})
	})

	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "my-job", Namespace: "default", Labels: map[string]string{schedv1alpha1.QuotaNameLabel: "team-a"}},
		Spec: batchv1.JobSpec{
			Suspend: ptr.To(true),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name: "test", Image: "busybox:stable", Command: []string{"/bin/sh", "-c", "sleep 30"},
					Resources: corev1.ResourceRequirements{Requests: four, Limits: four},
				}},
			}},
		},
	}
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	unit := &schedv1alpha1.QueueUnit{}
	waitFor(t, "QueueUnit default/my-job to be dequeued", time.Minute, func(ctx context.Context) (bool, error) {
		if ok, err := get(ctx, c, "default", "my-job", unit); !ok {
			return false, err
		}
		return unit.Status.Phase == schedv1alpha1.QueueUnitPhaseDequeued, nil
	})
	waitFor(t, "Job default/my-job to be resumed", time.Minute, func(ctx context.Context) (bool, error) {
		if ok, err := get(ctx, c, "default", "my-job", job); !ok {
			return false, err
		}
		return job.Spec.Suspend != nil && !*job.Spec.Suspend, nil
	})
	checkWebhook(t, env, webhookAddr)
	// Both hold their leader Lease in the release namespace.
	for _, name := range []string{"koord-queue", "koord-queue-controllers"} {
		lease := &coordinationv1.Lease{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: name}, lease); err != nil {
			t.Errorf("leader Lease %s/%s: %v", Namespace, name, err)
		} else if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			t.Errorf("leader Lease %s/%s has no holder", Namespace, name)
		}
	}
	// Their metrics, served as the Deployments' flags say (HTTPS by default).
	checkMetricsAccess(t, env, map[string]string{"koord-queue": schedMetrics, "koord-queue-controllers": ctrlMetrics},
		map[string][]string{"koord-queue": {"/healthz", "/readyz"}})
	// No request of either binary was refused on the way.
	for _, log := range []string{schedLog, ctrlLog} {
		data, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(strings.ToLower(line), "forbidden") {
				t.Errorf("%s: a request was forbidden: %s", filepath.Base(log), line)
			}
		}
	}
	t.Logf("QueueUnit %s is %s and Job %s runs, both binaries acting as the chart's ServiceAccounts", unit.Name, unit.Status.Phase, job.Name)

	// SIGTERM, as a kubelet stops a pod: each leader ends cleanly and gives
	// its Lease up, so a standby takes over at once instead of after the
	// lease duration.
	for name, stop := range map[string]func() error{"koord-queue": stopSched, "koord-queue-controllers": stopCtrl} {
		if err := stop(); err != nil {
			t.Errorf("%s after SIGTERM: %v, want exit status 0", name, err)
		}
		lease := &coordinationv1.Lease{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: name}, lease); err != nil {
			t.Errorf("leader Lease %s/%s: %v", Namespace, name, err)
		} else if h := ptr.Deref(lease.Spec.HolderIdentity, ""); h != "" {
			t.Errorf("leader Lease %s/%s still held by %s after SIGTERM, want released", Namespace, name, h)
		}
	}
}

func get(ctx context.Context, c client.Client, ns, name string, obj client.Object) (bool, error) {
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return true, nil
}

// saKubeconfig writes a kubeconfig holding a token of the ServiceAccount
// user (system:serviceaccount:NS:NAME), issued by the API server's
// TokenRequest API: the binary authenticates as that ServiceAccount exactly
// as it would in its pod.
func saKubeconfig(t *testing.T, cfg *rest.Config, user, dir string) string {
	t.Helper()
	parts := strings.Split(user, ":")
	if len(parts) != 4 {
		t.Fatalf("not a ServiceAccount user name: %s", user)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(parts[2]).CreateToken(context.Background(), parts[3],
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s: %v", user, err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, CertificateAuthority: cfg.CAFile}
	kc.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["sa"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "sa"}
	kc.CurrentContext = "sa"
	path := filepath.Join(dir, strings.ReplaceAll(user, ":", "_")+".kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// start runs a binary until the test ends, then stops it as a kubelet does
// (SIGTERM, SIGKILL after 15 s) and waits. Its output goes to logFile,
// printed when the test fails. The returned stop does the same earlier and
// reports how the binary ended: nil only for exit status 0 after SIGTERM.
func start(t *testing.T, bin string, args []string, logFile string) (stop func() error) {
	t.Helper()
	log, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var once sync.Once
	var exit error
	stop = func() error {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case exit = <-done:
				t.Logf("%s exited: %v", filepath.Base(bin), exit)
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				err := <-done
				exit = fmt.Errorf("%s did not end within 15s of SIGTERM, killed: %w", filepath.Base(bin), err)
				t.Log(exit)
			}
		})
		return exit
	}
	t.Cleanup(func() {
		_ = stop()
		_ = log.Close()
		if t.Failed() {
			data, _ := os.ReadFile(logFile)
			t.Logf("%s %s:\n%s", filepath.Base(bin), strings.Join(args, " "), tail(string(data), 60))
		}
	})
	return stop
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func replaceFlag(args []string, name, value string) []string {
	out := dropFlag(args, name)
	return append(out, fmt.Sprintf("--%s=%s", name, value))
}

func dropFlag(args []string, name string) []string {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "--"+name+"=") {
			out = append(out, a)
		}
	}
	return out
}
