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
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"

	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// appVersion is the chart's appVersion: the default tag of both images.
func appVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(chartDir(), "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(data, &chart); err != nil {
		t.Fatal(err)
	}
	if chart.AppVersion == "" {
		t.Fatal("Chart.yaml has no appVersion")
	}
	return chart.AppVersion
}

// makeImagePrefix is the Makefile's IMAGE_PREFIX default: `make images` and
// `make push` name the images <prefix>/<binary>:<tag>.
func makeImagePrefix(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^IMAGE_PREFIX \?= (\S+)$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("Makefile sets no IMAGE_PREFIX default")
	}
	return string(m[1])
}

func images(t *testing.T, r *Rendered) (sched, ctrl corev1.Container) {
	t.Helper()
	return container(t, r.deployment(t, "koord-queue"), "controller"),
		container(t, r.deployment(t, "koord-queue-controllers"), "manager")
}

// TestImageDefaults: by default the chart runs the images `make images`
// builds, tagged with its appVersion; the guide's keys override them.
func TestImageDefaults(t *testing.T) {
	prefix, tag := makeImagePrefix(t), appVersion(t)
	sched, ctrl := images(t, render(t))
	if want := prefix + "/koord-queue:" + tag; sched.Image != want {
		t.Errorf("koord-queue image %s, want %s (the image make images writes)", sched.Image, want)
	}
	if want := prefix + "/koord-queue-controllers:" + tag; ctrl.Image != want {
		t.Errorf("koord-queue-controllers image %s, want %s (the image make images writes)", ctrl.Image, want)
	}
	if tag == "v1.8.0" {
		t.Errorf("appVersion %s is the original project's release, whose binaries take other flags", tag)
	}

	for _, tc := range []struct {
		name               string
		sets               []string
		wantSched, wantCtl string
		wantPull           corev1.PullPolicy
	}{
		{
			name:      "guide's prefix",
			sets:      []string{"global.imagePrefix=registry.example:5000/mirror"},
			wantSched: "registry.example:5000/mirror/" + prefix + "/koord-queue:" + tag,
			wantCtl:   "registry.example:5000/mirror/" + prefix + "/koord-queue-controllers:" + tag,
			wantPull:  corev1.PullIfNotPresent,
		},
		{
			name: "guide's repositories and tags",
			sets: []string{
				"global.imagePrefix=registry.example", "controller.image.repository=team/kq", "controller.image.tag=v2.0.0",
				"controller.image.pullPolicy=Always",
				"extension.koord-queue-controllers.repository=team/kqc", "extension.koord-queue-controllers.tag=v2.0.1",
			},
			wantSched: "registry.example/team/kq:v2.0.0",
			wantCtl:   "registry.example/team/kqc:v2.0.1",
			wantPull:  corev1.PullAlways,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sched, ctrl := images(t, render(t, tc.sets...))
			if sched.Image != tc.wantSched || ctrl.Image != tc.wantCtl {
				t.Errorf("images %s and %s, want %s and %s", sched.Image, ctrl.Image, tc.wantSched, tc.wantCtl)
			}
			if sched.ImagePullPolicy != tc.wantPull {
				t.Errorf("koord-queue pull policy %s, want %s", sched.ImagePullPolicy, tc.wantPull)
			}
		})
	}
}

// TestNoExtensions: a release with every extension off renders without
// koord-queue-controllers (it would refuse to start with nothing to run);
// koord-queue is unchanged.
func TestNoExtensions(t *testing.T) {
	off := []string{"extension.batchjob.enable=false", "controller.replicas=2",
		"extension.koord-queue-controllers.replicas=2", "networkPolicy.enabled=true",
		"metrics.serviceMonitor.enabled=true", "metrics.podMonitor.enabled=true"}
	r := render(t, off...)
	if d := r.Find("Deployment", "koord-queue-controllers"); d != nil {
		t.Error("Deployment koord-queue-controllers rendered with no extension enabled")
	}
	for _, kind := range []string{"PodDisruptionBudget", "NetworkPolicy", "Service"} {
		if o := r.Find(kind, "koord-queue-controllers"); o != nil {
			t.Errorf("%s koord-queue-controllers rendered without its Deployment", kind)
		}
	}
	if o := r.Find("Service", "koord-queue-controllers-metrics"); o != nil {
		t.Error("metrics Service of koord-queue-controllers rendered without its Deployment")
	}
	sched := container(t, r.deployment(t, "koord-queue"), "controller")
	def := container(t, render(t).deployment(t, "koord-queue"), "controller")
	if diff := cmp.Diff(def.Args, sched.Args); diff != "" {
		t.Errorf("koord-queue args differ without extensions (-default +got):\n%s", diff)
	}
	if out := notes(t, off...); !strings.Contains(out, "No job extension is enabled") {
		t.Errorf("NOTES.txt does not say that no extension runs:\n%s", out)
	}
}

// notes renders NOTES.txt as `helm install` prints it. helm template leaves
// NOTES.txt out and `helm install --dry-run` needs a cluster, so a copy of
// the chart gets a ConfigMap holding what NOTES.txt renders to.
func notes(t *testing.T, sets ...string) string {
	t.Helper()
	return notesWith(t, []string{"--api-versions", servedPolicies}, sets...)
}

// notesWith is notes with other helm flags (--kube-version, --api-versions).
func notesWith(t *testing.T, flags []string, sets ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "koord-queue")
	if out, err := exec.Command("cp", "-R", chartDir(), dir).CombinedOutput(); err != nil {
		t.Fatalf("copy the chart: %v\n%s", err, out)
	}
	probe := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n" +
		"  NOTES.txt: {{ include \"koord-queue/templates/NOTES.txt\" . | quote }}\n"
	if err := os.WriteFile(filepath.Join(dir, "templates", "zz-notes-probe.yaml"), []byte(probe), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"template", "koord-queue", dir, "--namespace", Namespace, "--show-only", "templates/zz-notes-probe.yaml"}, flags...)
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	out, err := exec.Command(helm(t), args...).Output()
	if err != nil {
		t.Fatalf("helm %s: %v", strings.Join(args, " "), err)
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(out, &cm); err != nil {
		t.Fatalf("NOTES.txt probe: %v\n%s", err, out)
	}
	return cm.Data["NOTES.txt"]
}

func TestNotes(t *testing.T) {
	out := notes(t)
	for _, want := range []string{
		"koord-queue " + appVersion(t),
		makeImagePrefix(t) + "/koord-queue:" + appVersion(t),
		makeImagePrefix(t) + "/koord-queue-controllers:" + appVersion(t),
		"Job extensions: job",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("NOTES.txt lacks %q:\n%s", want, out)
		}
	}
}

func TestPodDisruptionBudgets(t *testing.T) {
	if n := render(t).Kinds()["PodDisruptionBudget"]; n != 0 {
		t.Errorf("%d PodDisruptionBudgets with one replica each, want none", n)
	}
	r := render(t, "controller.replicas=2", "extension.koord-queue-controllers.replicas=3")
	for _, name := range []string{"koord-queue", "koord-queue-controllers"} {
		pdb := &policyv1.PodDisruptionBudget{}
		r.Into(t, "PodDisruptionBudget", name, pdb)
		if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.MinAvailable != nil {
			t.Errorf("PodDisruptionBudget %s: maxUnavailable %v minAvailable %v, want maxUnavailable 1", name, pdb.Spec.MaxUnavailable, pdb.Spec.MinAvailable)
		}
		pods := r.deployment(t, name).Spec.Template.Labels
		for k, v := range pdb.Spec.Selector.MatchLabels {
			if pods[k] != v {
				t.Errorf("PodDisruptionBudget %s selects %s=%s, its pods have %q", name, k, v, pods[k])
			}
		}
	}
	r = render(t, "controller.replicas=2")
	if r.Find("PodDisruptionBudget", "koord-queue-controllers") != nil {
		t.Error("PodDisruptionBudget for koord-queue-controllers with one replica")
	}
	if n := render(t, "controller.replicas=2", "podDisruptionBudget.enabled=false").Kinds()["PodDisruptionBudget"]; n != 0 {
		t.Errorf("%d PodDisruptionBudgets with podDisruptionBudget.enabled=false", n)
	}
}

func TestPlacement(t *testing.T) {
	r := render(t)
	for _, name := range []string{"koord-queue", "koord-queue-controllers"} {
		spec := r.deployment(t, name).Spec.Template.Spec
		if len(spec.TopologySpreadConstraints) != 0 || spec.PriorityClassName != "" {
			t.Errorf("%s: spread %v priorityClassName %q by default, want neither", name, spec.TopologySpreadConstraints, spec.PriorityClassName)
		}
	}

	r = render(t, "controller.replicas=2", "controller.priorityClassName=system-cluster-critical",
		"extension.koord-queue-controllers.priorityClassName=high",
		"extension.koord-queue-controllers.topologySpreadConstraints[0].maxSkew=2",
		"extension.koord-queue-controllers.topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone",
		"extension.koord-queue-controllers.topologySpreadConstraints[0].whenUnsatisfiable=DoNotSchedule",
	)
	sched := r.deployment(t, "koord-queue").Spec.Template.Spec
	if sched.PriorityClassName != "system-cluster-critical" {
		t.Errorf("koord-queue priorityClassName %q", sched.PriorityClassName)
	}
	if c := sched.TopologySpreadConstraints; len(c) != 1 || c[0].WhenUnsatisfiable != corev1.ScheduleAnyway ||
		c[0].TopologyKey != "kubernetes.io/hostname" || c[0].LabelSelector.MatchLabels["app.kubernetes.io/name"] != "koord-queue" {
		t.Errorf("koord-queue with 2 replicas: spread %+v, want a soft spread over nodes", c)
	}
	ctrl := r.deployment(t, "koord-queue-controllers").Spec.Template.Spec
	if ctrl.PriorityClassName != "high" {
		t.Errorf("koord-queue-controllers priorityClassName %q", ctrl.PriorityClassName)
	}
	if c := ctrl.TopologySpreadConstraints; len(c) != 1 || c[0].MaxSkew != 2 || c[0].TopologyKey != "topology.kubernetes.io/zone" {
		t.Errorf("koord-queue-controllers spread %+v, want the value as given", c)
	}
}

func TestPodMonitor(t *testing.T) {
	r := render(t)
	if r.Find("PodMonitor", "koord-queue") != nil || r.Find("ServiceMonitor", "koord-queue") != nil {
		t.Error("a PodMonitor or ServiceMonitor is rendered by default")
	}
	r = render(t, "metrics.podMonitor.enabled=true", "metrics.podMonitor.labels.release=prom", "metrics.podMonitor.interval=15s")
	pm := r.Find("PodMonitor", "koord-queue")
	if pm == nil {
		t.Fatal("PodMonitor not rendered")
	}
	if pm.GetLabels()["release"] != "prom" || pm.GetNamespace() != Namespace {
		t.Errorf("PodMonitor labels %v namespace %s", pm.GetLabels(), pm.GetNamespace())
	}
	var spec struct {
		Selector struct {
			MatchExpressions []struct {
				Key    string   `json:"key"`
				Values []string `json:"values"`
			} `json:"matchExpressions"`
		} `json:"selector"`
		Endpoints []struct {
			Port, Path, Interval string
			HonorLabels          bool `json:"honorLabels"`
		} `json:"podMetricsEndpoints"`
	}
	data, _ := yaml.Marshal(pm.Object["spec"])
	if err := yaml.Unmarshal(data, &spec); err != nil {
		t.Fatal(err)
	}
	// honorLabels: the units' namespace label stays namespace.
	if len(spec.Endpoints) != 1 || spec.Endpoints[0].Port != "metrics" || spec.Endpoints[0].Interval != "15s" || !spec.Endpoints[0].HonorLabels {
		t.Errorf("PodMonitor endpoints %+v", spec.Endpoints)
	}
	names := map[string][]string{}
	for _, e := range spec.Selector.MatchExpressions {
		names[e.Key] = e.Values
	}
	if diff := cmp.Diff([]string{"koord-queue", "koord-queue-controllers"}, names["app.kubernetes.io/name"]); diff != "" {
		t.Errorf("PodMonitor selects pods named (-want +got):\n%s", diff)
	}
	// Both pods name their metrics port "metrics".
	for _, c := range []corev1.Container{container(t, r.deployment(t, "koord-queue"), "controller"), container(t, r.deployment(t, "koord-queue-controllers"), "manager")} {
		if len(c.Ports) == 0 || c.Ports[0].Name != "metrics" {
			t.Errorf("container %s ports %v, want one named metrics first", c.Name, c.Ports)
		}
	}
}

func TestNetworkPolicy(t *testing.T) {
	if n := render(t).Kinds()["NetworkPolicy"]; n != 0 {
		t.Errorf("%d NetworkPolicies by default, want none", n)
	}
	// The web view is served on the visibility port: it needs no port of its own.
	r := render(t, "networkPolicy.enabled=true", "controller.enableVisibilityServer=true", "controller.visibility.ui.enabled=true",
		"networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.name=monitoring")
	ports := func(np *networkingv1.NetworkPolicy) []string {
		var out []string
		for _, rule := range np.Spec.Ingress {
			for _, p := range rule.Ports {
				out = append(out, p.Port.String())
			}
		}
		return out
	}
	for name, want := range map[string][]string{
		"koord-queue":             {"metrics", "visibility"},
		"koord-queue-controllers": {"metrics", "health", "webhook"},
	} {
		np := &networkingv1.NetworkPolicy{}
		r.Into(t, "NetworkPolicy", name, np)
		if diff := cmp.Diff(want, ports(np)); diff != "" {
			t.Errorf("NetworkPolicy %s ports (-want +got):\n%s", name, diff)
		}
		if len(np.Spec.PolicyTypes) != 1 || np.Spec.PolicyTypes[0] != networkingv1.PolicyTypeIngress {
			t.Errorf("NetworkPolicy %s policy types %v, want Ingress only", name, np.Spec.PolicyTypes)
		}
		if from := np.Spec.Ingress[0].From; len(from) != 1 || from[0].NamespaceSelector.MatchLabels["name"] != "monitoring" {
			t.Errorf("NetworkPolicy %s: metrics reachable from %v, want the monitoring namespace", name, from)
		}
		pods := r.deployment(t, name).Spec.Template.Labels
		for k, v := range np.Spec.PodSelector.MatchLabels {
			if pods[k] != v {
				t.Errorf("NetworkPolicy %s selects %s=%s, its pods have %q", name, k, v, pods[k])
			}
		}
	}
	np := &networkingv1.NetworkPolicy{}
	render(t, "networkPolicy.enabled=true").Into(t, "NetworkPolicy", "koord-queue", np)
	if diff := cmp.Diff([]string{"metrics"}, ports(np)); diff != "" {
		t.Errorf("koord-queue without the visibility server: ports (-want +got):\n%s", diff)
	}
}

// TestLintReleaseValues lints the chart with every value this file covers.
func TestLintReleaseValues(t *testing.T) {
	args := []string{"lint", "--strict", chartDir()}
	for _, s := range []string{
		"controller.replicas=2", "extension.koord-queue-controllers.replicas=2", "networkPolicy.enabled=true",
		"metrics.podMonitor.enabled=true", "metrics.serviceMonitor.enabled=true", "extension.mpi.enable=true",
		"controller.priorityClassName=high",
	} {
		args = append(args, "--set", s)
	}
	if out, err := exec.Command(helm(t), args...).CombinedOutput(); err != nil {
		t.Fatalf("helm lint: %v\n%s", err, out)
	}
	if out, err := exec.Command(helm(t), "lint", "--strict", chartDir(), "--set", "extension.batchjob.enable=false").CombinedOutput(); err != nil {
		t.Fatalf("helm lint with no extension: %v\n%s", err, out)
	}
}
