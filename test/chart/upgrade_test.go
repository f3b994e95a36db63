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
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/test/cluster"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// ownCRDs are the CRDs the v1.8 chart and ours both render.
var ownCRDs = []string{
	"queues.scheduling.x-k8s.io", "queueunits.scheduling.x-k8s.io",
	"admissionchecks.scheduling.x-k8s.io", "provisioningrequestconfigs.scheduling.x-k8s.io",
}

// upgradeCmd is what the chart's check tells a v1.8 user to run.
const upgradeCmd = "kubectl -n " + Namespace + " delete deployment koord-queue koord-queue-controllers --ignore-not-found"

// TestUpgradeFromV18 runs on the local cluster (kube-controller-manager,
// kube-scheduler and kwok nodes), so jobs have pods that run. It first
// checks that an install over CRDs of no release fails before it changes
// anything. Then it installs a release of a chart shaped like the original
// v1.8.0 (test/upgrade/testdata), with a Queue, a running job whose pod runs
// and two queued ones, and upgrades it to this chart with helm, as the user
// guide says.
// The first upgrade must fail before it changes anything, naming the command
// to run; after it the upgrade succeeds, keeps every object, moves the CRDs
// to the new schemas, and the new binaries, run as processes from the
// upgraded Deployments' arguments, leave the running job and its pod alone
// and admit the queued ones in priority order as quota allows.
func TestUpgradeFromV18(t *testing.T) {
	env := startLocalCluster(t)
	ctx := t.Context()
	c := env.Client
	crds := crdClient(t, env.Config)
	hm, kc := helmAndKubectl(t, env.Kubeconfig)

	// The cluster applied the CRDs without Helm's marks: an install stops
	// at render time, naming the commands that hand them over.
	if out, err := hm("install", "koord-queue", chartDir(), "--namespace", Namespace); err == nil || !strings.Contains(out, "kubectl annotate crd ") {
		t.Fatalf("install over CRDs of no release: err %v, want a failure naming kubectl annotate:\n%s", err, out)
	}
	for _, obj := range []client.Object{&corev1.ServiceAccount{}, &corev1.ConfigMap{}} {
		if ok, err := get(ctx, c, Namespace, "koord-queue-config", obj); ok || err != nil {
			t.Fatalf("the failed install made %T koord-queue-config (%v)", obj, err)
		}
	}
	dropOwnCRDs(t, crds)

	fixture := filepath.Join(framework.RepoRoot(), "test", "upgrade", "testdata", "koord-queue-v1.8.0")
	if out, err := hm("install", "koord-queue", fixture, "--namespace", Namespace, "--create-namespace"); err != nil {
		t.Fatalf("install the v1.8 fixture: %v\n%s", err, out)
	}
	waitEstablished(t, crds)
	before := seedV18(t, c)
	pod := waitPodRunning(t, c, "running")
	checkNoPod(t, c, "queued-high")

	// The v1.8 schema prunes a status field it does not know.
	checkStatusQuota(t, c, "running", false)

	out, err := hm("upgrade", "koord-queue", chartDir(), "--namespace", Namespace)
	if err == nil || !strings.Contains(out, upgradeCmd) {
		t.Fatalf("upgrade over v1.8 Deployments: err %v, want a failure naming %q:\n%s", err, upgradeCmd, out)
	}
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: "koord-queue"}, d); err != nil || d.Spec.Selector.MatchLabels["control-plane"] != "koord-queue" {
		t.Fatalf("the failed upgrade changed Deployment koord-queue: %v %v", err, d.Spec.Selector)
	}

	if out, err := kc(strings.Fields(upgradeCmd)[1:]...); err != nil {
		t.Fatalf("%s: %v\n%s", upgradeCmd, err, out)
	}
	if out, err := hm("upgrade", "koord-queue", chartDir(), "--namespace", Namespace); err != nil {
		t.Fatalf("upgrade after deleting the old Deployments: %v\n%s", err, out)
	}
	checkUpgraded(t, c, crds, before)
	checkStatusQuota(t, c, "running", true)

	startRelease(t, env.Config, c)
	waitPhase(t, c, "queued-high", schedv1alpha1.QueueUnitPhaseDequeued)
	waitResumed(t, c, "queued-high")
	waitPodRunning(t, c, "queued-high")
	checkStillRunning(t, c, pod)
	// team-a's 2 cpus are held by running and queued-high.
	if u := unitOf(t, c, "queued-low"); u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued {
		t.Errorf("queued-low is %s beyond its quota, want Enqueued", u.Status.Phase)
	}
	// Once the running job is gone, its quota goes to queued-low.
	if err := c.Delete(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "running"}},
		client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, c, "queued-low", schedv1alpha1.QueueUnitPhaseDequeued)
}

// startLocalCluster starts the local cluster of test/cluster with the CRDs
// of this checkout (and the ElasticQuota CRD) applied without Helm's marks
// and no koord-queue: the test installs releases itself. Pods of a Job run
// for ten minutes, longer than the test.
func startLocalCluster(t *testing.T) *cluster.Cluster {
	t.Helper()
	ports, err := cluster.FreePorts()
	if err != nil {
		t.Fatal(err)
	}
	ctrllog.SetLogger(logr.Discard()) // the cluster's clients
	tools := filepath.Dir(helm(t))
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"} {
		if _, err := os.Stat(filepath.Join(tools, name)); err != nil {
			t.Fatalf("%s is not in %s: build it with 'hack/tools.sh %s' (run these tests with 'make test-chart')", name, tools, name)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	// The cluster's logs stay when the test fails.
	state, err := os.MkdirTemp("", "koord-queue-upgrade-")
	if err != nil {
		t.Fatal(err)
	}
	env, err := cluster.Start(ctx, cluster.Options{
		StateDir:      state,
		ToolsDir:      tools,
		Ports:         ports,
		PodRunTime:    10 * time.Minute,
		ExtraCRDDirs:  cluster.CRDDirs(framework.RepoRoot()),
		KoordQueue:    cluster.KoordQueue{Mode: cluster.KoordQueueOff},
		DieWithParent: true,
		Log:           testWriter{t},
	})
	if err != nil {
		t.Fatalf("start the local cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop the local cluster: %v", err)
		}
		if t.Failed() {
			t.Logf("the local cluster's logs are kept in %s", filepath.Join(state, "logs"))
		} else {
			_ = os.RemoveAll(state)
		}
	})
	return env
}

// testWriter logs the cluster's progress lines through the test.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// crdClient is a client that knows CustomResourceDefinitions.
func crdClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// dropOwnCRDs removes the CRDs the cluster installed: the v1.8 release makes its own.
func dropOwnCRDs(t *testing.T, crds client.Client) {
	t.Helper()
	for _, name := range ownCRDs {
		crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := crds.Delete(t.Context(), crd); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "CRD "+name+" to be gone", time.Minute, func(ctx context.Context) (bool, error) {
			err := crds.Get(ctx, client.ObjectKey{Name: name}, &apiextensionsv1.CustomResourceDefinition{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
	}
}

func waitEstablished(t *testing.T, crds client.Client) {
	t.Helper()
	for _, name := range ownCRDs {
		waitFor(t, "CRD "+name+" to be established", time.Minute, func(ctx context.Context) (bool, error) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if ok, err := get(ctx, crds, "", name, crd); !ok {
				return false, err
			}
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
	}
}

// helmAndKubectl returns helm and kubectl bound to the cluster by an admin
// kubeconfig; each returns its combined output.
func helmAndKubectl(t *testing.T, kubeconfig string) (hm, kc func(args ...string) (string, error)) {
	t.Helper()
	dir := t.TempDir()
	run := func(bin string) func(args ...string) (string, error) {
		return func(args ...string) (string, error) {
			cmd := exec.CommandContext(t.Context(), bin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
			// helm keeps its cache and settings here, not in $HOME.
			cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(dir, "cache"),
				"HELM_CONFIG_HOME="+filepath.Join(dir, "config"), "HELM_DATA_HOME="+filepath.Join(dir, "data"))
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
	}
	return run(helm(t)), run(kubectl(t))
}

// seedV18 makes what a v1.8 cluster holds: ElasticQuota team-a (2 cpus),
// its Queue, Job running with its unit Running, and suspended Jobs
// queued-high and queued-low with Enqueued units. It returns the UIDs of
// the Queue and the units.
func seedV18(t *testing.T, c client.Client) map[string]types.UID {
	t.Helper()
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	two := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	must(c.Create(ctx, &eqv1alpha1.ElasticQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "team-a", Namespace: "default", Labels: map[string]string{
			"quota.scheduling.koordinator.sh/parent": "", "quota.scheduling.koordinator.sh/is-parent": "false",
		}},
		Spec: eqv1alpha1.ElasticQuotaSpec{Min: two, Max: two},
	}))
	queue := &schedv1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Namespace: Namespace}}
	must(c.Create(ctx, queue))
	uids := map[string]types.UID{"queue": queue.UID}

	one := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	for i, j := range []struct {
		name     string
		priority int32
		phase    schedv1alpha1.QueueUnitPhase
	}{
		{"running", 0, schedv1alpha1.QueueUnitPhaseRunning},
		{"queued-low", 1, schedv1alpha1.QueueUnitPhaseEnqueued},
		{"queued-high", 10, schedv1alpha1.QueueUnitPhaseEnqueued},
	} {
		labels := map[string]string{schedv1alpha1.QuotaNameLabel: "team-a"}
		tmpl := corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
				Name: "work", Image: "busybox:stable", Resources: corev1.ResourceRequirements{Requests: one, Limits: one},
			}}},
		}
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: j.name, Namespace: "default", Labels: labels},
			Spec:       batchv1.JobSpec{Suspend: ptr.To(j.phase != schedv1alpha1.QueueUnitPhaseRunning), Template: tmpl},
		}
		must(c.Create(ctx, job))
		unit := &schedv1alpha1.QueueUnit{
			ObjectMeta: metav1.ObjectMeta{Name: j.name, Namespace: "default", Labels: labels,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}},
			Spec: schedv1alpha1.QueueUnitSpec{
				ConsumerRef: &corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, Namespace: job.Namespace, UID: job.UID},
				Queue:       "team-a",
				Priority:    ptr.To(j.priority),
				Resource:    one,
				PodSet:      []schedv1alpha1.PodSet{{Name: "main", Count: 1, Template: tmpl}},
			},
		}
		must(c.Create(ctx, unit))
		// Units queued in this order, a second apart, as a v1.8 scheduler left them.
		patch := fmt.Sprintf(`{"status":{"phase":%q,"lastUpdateTime":%q}}`, j.phase,
			time.Now().Add(time.Duration(i-10)*time.Second).UTC().Format(time.RFC3339))
		must(c.Status().Patch(ctx, unit, client.RawPatch(types.MergePatchType, []byte(patch))))
		uids[j.name] = unit.UID
	}
	return uids
}

// checkStatusQuota writes status.quota on a unit and reports whether the
// API server kept it (it prunes it under the v1.8 schema).
func checkStatusQuota(t *testing.T, c client.Client, name string, wantKept bool) {
	t.Helper()
	u := unitOf(t, c, name)
	if err := c.Status().Patch(t.Context(), u, client.RawPatch(types.MergePatchType, []byte(`{"status":{"quota":"team-a"}}`))); err != nil {
		t.Fatal(err)
	}
	if kept := unitOf(t, c, name).Status.Quota == "team-a"; kept != wantKept {
		t.Errorf("QueueUnit %s: status.quota kept=%v, want %v", name, kept, wantKept)
	}
}

func unitOf(t *testing.T, c client.Client, name string) *schedv1alpha1.QueueUnit {
	t.Helper()
	u := &schedv1alpha1.QueueUnit{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: name}, u); err != nil {
		t.Fatal(err)
	}
	return u
}

// checkUpgraded: the release is ours, its CRDs are kept and carry the new
// schemas, and the Queue and every unit are the same objects in the same phase.
func checkUpgraded(t *testing.T, c, crds client.Client, before map[string]types.UID) {
	t.Helper()
	ctx := t.Context()
	for _, name := range ownCRDs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := crds.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			t.Fatal(err)
		}
		if crd.Annotations["helm.sh/resource-policy"] != "keep" || crd.Annotations["meta.helm.sh/release-name"] != "koord-queue" {
			t.Errorf("CRD %s annotations %v, want keep and release koord-queue", name, crd.Annotations)
		}
		if name == "queueunits.scheduling.x-k8s.io" {
			status := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
			if _, ok := status.Properties["admissions"]; !ok {
				t.Errorf("CRD %s still has the v1.8 status schema", name)
			}
		}
	}
	for _, name := range []string{"koord-queue", "koord-queue-controllers"} {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: name}, d); err != nil {
			t.Fatal(err)
		}
		if d.Spec.Selector.MatchLabels["app.kubernetes.io/name"] != name {
			t.Errorf("Deployment %s selects %v after the upgrade", name, d.Spec.Selector.MatchLabels)
		}
	}
	if ok, err := get(ctx, c, Namespace, "koord-queue-plugin-config", &corev1.ConfigMap{}); ok || err != nil {
		t.Errorf("v1.8 ConfigMap koord-queue-plugin-config left behind (%v)", err)
	}
	q := &schedv1alpha1.Queue{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: "team-a"}, q); err != nil || q.UID != before["queue"] {
		t.Errorf("Queue team-a after the upgrade: %v, uid %s want %s", err, q.UID, before["queue"])
	}
	for name, phase := range map[string]schedv1alpha1.QueueUnitPhase{
		"running": schedv1alpha1.QueueUnitPhaseRunning, "queued-high": schedv1alpha1.QueueUnitPhaseEnqueued, "queued-low": schedv1alpha1.QueueUnitPhaseEnqueued,
	} {
		if u := unitOf(t, c, name); u.UID != before[name] || u.Status.Phase != phase {
			t.Errorf("QueueUnit %s after the upgrade: uid %s phase %s, want %s %s", name, u.UID, u.Status.Phase, before[name], phase)
		}
	}
}

// startRelease runs both binaries with the arguments of the upgraded
// release's Deployments and ConfigMap, read from the API server, each as
// its ServiceAccount; ports and the webhook move to loopback.
func startRelease(t *testing.T, cfg *rest.Config, c client.Client) {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", dir+string(os.PathSeparator), "./cmd/koord-queue", "./cmd/koord-queue-controllers")
	build.Dir = framework.RepoRoot()
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	args := func(name string) []string {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: name}, d); err != nil {
			t.Fatal(err)
		}
		return d.Spec.Template.Spec.Containers[0].Args
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: "koord-queue-config"}, cm); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte(cm.Data["config.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	sched := args("koord-queue")
	if v, _ := flag(sched, "metrics-secure"); v != "true" {
		t.Errorf("upgraded koord-queue serves metrics with --metrics-secure=%q, want true (HTTPS, as the guide says)", v)
	}
	sched = replaceFlag(replaceFlag(sched, "config", config), "metrics-bind-address", freeAddr(t))
	sched = append(sched, "--kubeconfig="+saKubeconfig(t, cfg, schedulerSA, dir))
	start(t, filepath.Join(dir, "koord-queue"), sched, filepath.Join(dir, "koord-queue.log"))

	ctrl := replaceFlag(args("koord-queue-controllers"), "metrics-bind-address", freeAddr(t))
	ctrl = replaceFlag(ctrl, "health-probe-bind-address", freeAddr(t))
	_, port, _ := strings.Cut(freeAddr(t), ":")
	ctrl = replaceFlag(ctrl, "webhook-port", port)
	ctrl = append(ctrl, "--webhook-host=127.0.0.1", "--webhook-cert-hosts=127.0.0.1",
		"--kubeconfig="+saKubeconfig(t, cfg, controllersSA, dir))
	start(t, filepath.Join(dir, "koord-queue-controllers"), ctrl, filepath.Join(dir, "koord-queue-controllers.log"))
}

func waitPhase(t *testing.T, c client.Client, name string, phase schedv1alpha1.QueueUnitPhase) {
	t.Helper()
	waitFor(t, "QueueUnit default/"+name+" to be "+string(phase), 2*time.Minute, func(ctx context.Context) (bool, error) {
		u := &schedv1alpha1.QueueUnit{}
		if ok, err := get(ctx, c, "default", name, u); !ok {
			return false, err
		}
		if u.Status.Phase != phase {
			return false, fmt.Errorf("QueueUnit %s is %s: %s", name, u.Status.Phase, u.Status.Message)
		}
		return true, nil
	})
}

func waitResumed(t *testing.T, c client.Client, name string) {
	t.Helper()
	waitFor(t, "Job default/"+name+" to be resumed", time.Minute, func(ctx context.Context) (bool, error) {
		job := &batchv1.Job{}
		if ok, err := get(ctx, c, "default", name, job); !ok {
			return false, err
		}
		return job.Spec.Suspend != nil && !*job.Spec.Suspend, nil
	})
}

// checkStillRunning: the job that ran before the upgrade was never
// suspended (its generation is the one it was created with), its unit is
// still Running and its pod is the one that ran before, still running.
func checkStillRunning(t *testing.T, c client.Client, pod *corev1.Pod) {
	t.Helper()
	job := &batchv1.Job{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "running"}, job); err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(job.Spec.Suspend, false) || job.Generation != 1 {
		spec, _ := json.Marshal(job.Spec.Suspend)
		t.Errorf("Job running after the upgrade: suspend %s generation %d, want never suspended", spec, job.Generation)
	}
	if u := unitOf(t, c, "running"); u.Status.Phase != schedv1alpha1.QueueUnitPhaseRunning {
		t.Errorf("QueueUnit running is %s after the upgrade, want Running", u.Status.Phase)
	}
	now := &corev1.Pod{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(pod), now); err != nil {
		t.Fatalf("the pod of Job running after the upgrade: %v", err)
	}
	if now.UID != pod.UID || now.Status.Phase != corev1.PodRunning || now.DeletionTimestamp != nil {
		t.Errorf("pod %s of Job running after the upgrade: uid %s phase %s deleting %v, want uid %s still Running",
			pod.Name, now.UID, now.Status.Phase, now.DeletionTimestamp != nil, pod.UID)
	}
}

// podsOfJob lists the pods the Job controller made for Job default/name.
func podsOfJob(ctx context.Context, c client.Client, name string) ([]corev1.Pod, error) {
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace("default"), client.MatchingLabels{batchv1.JobNameLabel: name}); err != nil {
		return nil, err
	}
	return pods.Items, nil
}

// waitPodRunning waits until the one pod of Job default/name runs on a fake
// node and returns it.
func waitPodRunning(t *testing.T, c client.Client, name string) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	waitFor(t, "the pod of Job default/"+name+" to run", 2*time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := podsOfJob(ctx, c, name)
		if err != nil || len(pods) != 1 {
			return false, err
		}
		pod = &pods[0]
		return pod.Status.Phase == corev1.PodRunning && pod.Spec.NodeName != "", nil
	})
	return pod
}

// checkNoPod: a queued (suspended) job has no pod.
func checkNoPod(t *testing.T, c client.Client, name string) {
	t.Helper()
	pods, err := podsOfJob(t.Context(), c, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 0 {
		t.Errorf("queued Job %s has %d pods, want none", name, len(pods))
	}
}
