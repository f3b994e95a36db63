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
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

func TestLint(t *testing.T) {
	for name, sets := range map[string][]string{
		"defaults": nil,
		"everything on": {
			"extension.tf.enable=true", "extension.pytorch.enable=true", "extension.argo.enable=true",
			"extension.spark.enable=true", "extension.ray.enable=true", "extension.raycluster.enable=true",
			"controller.enableVisibilityServer=true", "metrics.serviceMonitor.enabled=true", "grafana.dashboard.enabled=true",
		},
	} {
		t.Run(name, func(t *testing.T) {
			args := []string{"lint", "--strict", chartDir()}
			for _, s := range sets {
				args = append(args, "--set", s)
			}
			if out, err := exec.Command(helm(t), args...).CombinedOutput(); err != nil {
				t.Fatalf("helm lint: %v\n%s", err, out)
			}
		})
	}
}

// TestDefaults checks the rendering with the guide's default values.
func TestDefaults(t *testing.T) {
	r := render(t)

	wantKinds := map[string]int{
		"CustomResourceDefinition": 5, "ServiceAccount": 2, "ConfigMap": 1, "ClusterRole": 6,
		"ClusterRoleBinding": 3, "Role": 3, "RoleBinding": 3, "Deployment": 2,
		"ValidatingAdmissionPolicy": 4, "ValidatingAdmissionPolicyBinding": 4,
		// The admission webhook with its self-managed certificate's Secret.
		"MutatingWebhookConfiguration": 1, "Service": 1, "Secret": 1,
	}
	if diff := cmp.Diff(wantKinds, r.Kinds()); diff != "" {
		t.Errorf("rendered kinds (-want +got):\n%s", diff)
	}
	for _, o := range r.Objects {
		switch o.GetKind() {
		case "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "MutatingWebhookConfiguration":
		default:
			if o.GetNamespace() != Namespace {
				t.Errorf("%s %s is in namespace %q, want %q", o.GetKind(), o.GetName(), o.GetNamespace(), Namespace)
			}
		}
	}

	sched := r.deployment(t, "koord-queue")
	c := container(t, sched, "controller")
	if want := "koordinator-sh/koord-queue:" + appVersion(t); c.Image != want {
		t.Errorf("koord-queue image = %s, want %s", c.Image, want)
	}
	wantArgs := []string{
		"--config=/etc/koord-queue/config.yaml", "--v=2", "--metrics-bind-address=:10259", "--metrics-secure=true",
		"--leader-elect=true", "--leader-elect-resource-name=koord-queue",
		"--leader-elect-resource-namespace=koord-queue", "--leader-elect-lease-duration=15s",
		"--qps=100", "--burst=200",
	}
	if diff := cmp.Diff(wantArgs, c.Args); diff != "" {
		t.Errorf("koord-queue args (-want +got):\n%s", diff)
	}
	if sched.Spec.Template.Spec.ServiceAccountName != "koord-queue" {
		t.Errorf("koord-queue runs as %q", sched.Spec.Template.Spec.ServiceAccountName)
	}
	// The metrics port speaks HTTPS; the probes there need no credentials.
	checkProbes(t, c, "/healthz", "/readyz", 10259, corev1.URISchemeHTTPS)
	checkSecurity(t, sched.Spec.Template.Spec, c)
	checkConfigMount(t, sched.Spec.Template.Spec, c)

	ctrl := r.deployment(t, "koord-queue-controllers")
	m := container(t, ctrl, "manager")
	if want := "koordinator-sh/koord-queue-controllers:" + appVersion(t); m.Image != want {
		t.Errorf("koord-queue-controllers image = %s, want %s", m.Image, want)
	}
	wantArgs = []string{
		"--enabled-extensions=job", "--v=2", "--metrics-bind-address=:8080", "--metrics-secure=true", "--health-probe-bind-address=:8081",
		"--leader-elect=true", "--leader-elect-resource-name=koord-queue-controllers",
		"--leader-elect-resource-namespace=koord-queue", "--leader-elect-lease-duration=15s", "--release-namespace=koord-queue",
		"--webhook-port=9443", "--webhook-service-name=koord-queue-controllers-webhook",
		"--webhook-secret-name=koord-queue-controllers-webhook-cert", "--webhook-configuration-name=koord-queue-controllers",
	}
	if diff := cmp.Diff(wantArgs, m.Args); diff != "" {
		t.Errorf("koord-queue-controllers args (-want +got):\n%s", diff)
	}
	if ctrl.Spec.Template.Spec.ServiceAccountName != "koord-queue-controllers" {
		t.Errorf("koord-queue-controllers runs as %q", ctrl.Spec.Template.Spec.ServiceAccountName)
	}
	checkProbes(t, m, "/healthz", "/readyz", 8081, "")
	checkSecurity(t, ctrl.Spec.Template.Spec, m)

	// The configuration file is the guide's pluginConfigs and loads in koord-queue.
	cm := &corev1.ConfigMap{}
	r.Into(t, "ConfigMap", "koord-queue-config", cm)
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(cm.Data["config.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	conf, err := configv1.LoadKoordQueueConfiguration(file)
	if err != nil {
		t.Fatalf("koord-queue refuses the chart's config file: %v\n%s", err, cm.Data["config.yaml"])
	}
	var names []string
	for _, p := range conf.Plugins {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"Priority", "ElasticQuotaV2"}, names); diff != "" {
		t.Errorf("plugins (-want +got):\n%s", diff)
	}
	if conf.APIVersion != "scheduling.k8s.io/v1" || conf.Kind != "KoordQueueConfiguration" {
		t.Errorf("config file is %s %s", conf.APIVersion, conf.Kind)
	}

	for _, absent := range [][2]string{
		{"APIService", "v1alpha1.visibility.koord-queue.x-k8s.io"}, {"Service", "koord-queue-visibility-server"},
		{"ServiceMonitor", "koord-queue"}, {"ConfigMap", "koord-queue-grafana-dashboard"},
	} {
		if r.Find(absent[0], absent[1]) != nil {
			t.Errorf("%s %s rendered with default values", absent[0], absent[1])
		}
	}
	checkRBACRules(t, r)
	checkCRDsMatchConfig(t, r)
}

func checkProbes(t *testing.T, c corev1.Container, live, ready string, port int, scheme corev1.URIScheme) {
	t.Helper()
	for what, p := range map[string]*corev1.Probe{live: c.LivenessProbe, ready: c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != what {
			t.Errorf("container %s: probe for %s missing or wrong: %+v", c.Name, what, p)
			continue
		}
		var got int32
		for _, cp := range c.Ports {
			if cp.Name == p.HTTPGet.Port.StrVal {
				got = cp.ContainerPort
			}
		}
		if int(got) != port {
			t.Errorf("container %s: probe %s hits port %v (%d), want %d", c.Name, what, p.HTTPGet.Port.String(), got, port)
		}
		if p.HTTPGet.Scheme != scheme {
			t.Errorf("container %s: probe %s scheme %q, want %q", c.Name, what, p.HTTPGet.Scheme, scheme)
		}
	}
}

func checkSecurity(t *testing.T, pod corev1.PodSpec, c corev1.Container) {
	t.Helper()
	ps, sc := pod.SecurityContext, c.SecurityContext
	switch {
	case ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot:
		t.Errorf("%s: pod may run as root", c.Name)
	case ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Errorf("%s: pod seccomp profile is not RuntimeDefault", c.Name)
	case sc == nil:
		t.Fatalf("%s: no container securityContext", c.Name)
	case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot:
		t.Errorf("%s: container may run as root", c.Name)
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Errorf("%s: root filesystem is writable", c.Name)
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Errorf("%s: privilege escalation allowed", c.Name)
	case sc.Capabilities == nil || !cmp.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
		t.Errorf("%s: capabilities not dropped: %+v", c.Name, sc.Capabilities)
	case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Errorf("%s: container seccomp profile is not RuntimeDefault", c.Name)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("%s: resources not set: %+v", c.Name, c.Resources)
	}
}

func checkConfigMount(t *testing.T, pod corev1.PodSpec, c corev1.Container) {
	t.Helper()
	path, _ := flag(c.Args, "config")
	var mounted bool
	for _, vm := range c.VolumeMounts {
		if filepath.Dir(path) != vm.MountPath {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name == vm.Name && v.ConfigMap != nil && v.ConfigMap.Name == "koord-queue-config" {
				mounted = true
			}
		}
	}
	if !mounted {
		t.Errorf("--config=%s is not a file of ConfigMap koord-queue-config", path)
	}
}

// checkRBACRules reads the rendered rules: each binary gets what it calls and
// nothing that lets it touch what it must not.
func checkRBACRules(t *testing.T, r *Rendered) {
	t.Helper()
	sched := r.clusterRole(t, "koord-queue").Rules
	ctrl := r.clusterRole(t, "koord-queue-controllers").Rules
	type check struct {
		group, resource, verb string
		want                  bool
	}
	for role, checks := range map[string]struct {
		rules  []rbacv1.PolicyRule
		checks []check
	}{
		"koord-queue": {sched, []check{
			{"scheduling.x-k8s.io", "queueunits", "watch", true},
			{"scheduling.x-k8s.io", "queueunits/status", "patch", true},
			{"scheduling.x-k8s.io", "queues", "delete", true},
			{"scheduling.x-k8s.io", "queues/status", "update", true},
			{"scheduling.sigs.k8s.io", "elasticquotas", "list", true},
			{"", "namespaces", "create", true},
			{"events.k8s.io", "events", "create", true},
			{"scheduling.x-k8s.io", "queueunits", "update", false},
			{"scheduling.x-k8s.io", "queueunits", "delete", false},
			{"scheduling.sigs.k8s.io", "elasticquotas", "update", false},
			{"batch", "jobs", "update", false},
			{"", "pods", "delete", false},
			{"", "secrets", "get", false},
			{"", "namespaces", "delete", false},
		}},
		"koord-queue-controllers": {ctrl, []check{
			{"batch", "jobs", "patch", true},
			{"kubeflow.org", "tfjobs", "patch", true},
			{"ray.io", "rayclusters", "patch", true},
			{"argoproj.io", "workflows", "patch", true},
			{"scheduling.x-k8s.io", "queueunits", "create", true},
			{"scheduling.x-k8s.io", "queueunits/status", "patch", true},
			{"scheduling.x-k8s.io", "queues", "delete", false},
			{"scheduling.x-k8s.io", "queues", "get", false},
			{"batch", "jobs", "delete", false},
			{"batch", "jobs", "create", false},
			{"", "secrets", "get", false},
			{"", "pods", "delete", false},
			{"", "namespaces", "watch", true},
			{"", "namespaces", "delete", false},
			{"", "namespaces", "update", false},
		}},
	} {
		for _, c := range checks.checks {
			if got := allows(checks.rules, c.group, c.resource, c.verb); got != c.want {
				t.Errorf("ClusterRole %s: %s %s.%s allowed=%v, want %v", role, c.verb, c.resource, c.group, got, c.want)
			}
		}
	}
}

// checkCRDsMatchConfig compares the rendered CRDs with config/crd.
func checkCRDsMatchConfig(t *testing.T, r *Rendered) {
	t.Helper()
	root := framework.RepoRoot()
	files, err := filepath.Glob(filepath.Join(root, "config", "crd", "*", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs under config/crd: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		want := &unstructured.Unstructured{}
		if err := want.UnmarshalJSON(js); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name := want.GetName()
		got := r.Find("CustomResourceDefinition", name)
		if got == nil {
			t.Errorf("CRD %s (%s) not rendered", name, f)
			continue
		}
		if diff := cmp.Diff(want.Object["spec"], got.Object["spec"]); diff != "" {
			t.Errorf("CRD %s: spec differs from %s (-config +chart):\n%s", name, f, diff)
		}
		// Templates kept on uninstall: Helm upgrades them, and never deletes them with their objects.
		if got.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
			t.Errorf("CRD %s lacks helm.sh/resource-policy: keep", name)
		}
	}
}

func TestExtensions(t *testing.T) {
	all := []string{
		"extension.tf.enable=true", "extension.pytorch.enable=true", "extension.argo.enable=true",
		"extension.spark.enable=true", "extension.ray.enable=true",
	}
	for _, tc := range []struct {
		name    string
		sets    []string
		want    string
		wantErr string
	}{
		{name: "defaults", want: "job"},
		{name: "all guide extensions", sets: all, want: "job,tfjob,pytorchjob,workflow,sparkapp,rayjob,rayjobv1alpha1"},
		{name: "all and raycluster", sets: append(all[:len(all):len(all)], "extension.raycluster.enable=true"),
			want: "job,tfjob,pytorchjob,workflow,sparkapp,rayjob,rayjobv1alpha1,raycluster"},
		{name: "raycluster only", sets: []string{"extension.batchjob.enable=false", "extension.raycluster.enable=true"}, want: "raycluster"},
		{name: "ray without batch", sets: []string{"extension.batchjob.enable=false", "extension.ray.enable=true"}, want: "rayjob,rayjobv1alpha1"},
		{name: "mpi", sets: []string{"extension.mpi.enable=true"}, want: "job,mpijob"},
		{name: "pod", sets: []string{"extension.pod.enable=true"}, want: "job,pod"},
		{name: "jobset", sets: []string{"extension.jobset.enable=true"}, want: "job,jobset"},
		{name: "leaderworkerset", sets: []string{"extension.leaderworkerset.enable=true"}, want: "job,leaderworkerset"},
		{name: "trainjob", sets: []string{"extension.trainjob.enable=true"}, want: "job,trainjob"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.wantErr != "" {
				_, err := renderRaw(t, tc.sets...)
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("helm template: got error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			r := render(t, tc.sets...)
			m := container(t, r.deployment(t, "koord-queue-controllers"), "manager")
			got, ok := flag(m.Args, "enabled-extensions")
			if !ok || got != tc.want {
				t.Errorf("--enabled-extensions=%q (present %v), want %q", got, ok, tc.want)
			}
		})
	}
}

// TestJobRBACFollowsSwitches: with rbac.allJobKinds=false only enabled kinds
// are granted.
func TestJobRBACFollowsSwitches(t *testing.T) {
	r := render(t, "rbac.allJobKinds=false", "extension.tf.enable=true")
	rules := r.clusterRole(t, "koord-queue-controllers").Rules
	for _, c := range []struct {
		group, resource string
		want            bool
	}{
		{"batch", "jobs", true}, {"kubeflow.org", "tfjobs", true}, {"batch", "jobs/finalizers", true},
		{"kubeflow.org", "pytorchjobs", false}, {"kubeflow.org", "mpijobs", false}, {"jobset.x-k8s.io", "jobsets", false}, {"trainer.kubeflow.org", "trainjobs", false}, {"ray.io", "rayjobs", false}, {"argoproj.io", "workflows", false},
	} {
		if got := allows(rules, c.group, c.resource, "patch") || allows(rules, c.group, c.resource, "update"); got != c.want {
			t.Errorf("%s.%s granted=%v, want %v", c.resource, c.group, got, c.want)
		}
	}
}

// TestPodRBACOnlyWithPodExtension: writing pods is granted only with
// extension.pod.enable or extension.leaderworkerset.enable (both hold pods
// by the gate, and render the pods webhook), whatever rbac.allJobKinds says.
func TestPodRBACOnlyWithPodExtension(t *testing.T) {
	for _, sets := range [][]string{nil, {"rbac.allJobKinds=true"}} {
		rules := render(t, sets...).clusterRole(t, "koord-queue-controllers").Rules
		for _, verb := range []string{"update", "patch", "delete"} {
			if allows(rules, "", "pods", verb) {
				t.Errorf("%v: pods %s granted without extension.pod.enable", sets, verb)
			}
		}
	}
	for _, on := range []string{"extension.pod.enable=true", "extension.leaderworkerset.enable=true"} {
		rules := render(t, on).clusterRole(t, "koord-queue-controllers").Rules
		for verb, want := range map[string]bool{"update": true, "patch": true, "delete": true, "create": false} {
			if got := allows(rules, "", "pods", verb); got != want {
				t.Errorf("%s: pods %s granted=%v, want %v", on, verb, got, want)
			}
		}
		if n := len(render(t, on).webhookConfig(t).Webhooks); n != 2 {
			t.Errorf("%s: %d webhooks, want 2 (jobs and pods)", on, n)
		}
	}
}

func TestVisibility(t *testing.T) {
	r := render(t, "controller.enableVisibilityServer=true")
	c := container(t, r.deployment(t, "koord-queue"), "controller")
	if v, _ := flag(c.Args, "enableVisibilityServer"); v != "true" {
		t.Errorf("--enableVisibilityServer=%q, want true", v)
	}
	if v, _ := flag(c.Args, "visibility-bind-address"); v != ":8443" {
		t.Errorf("--visibility-bind-address=%q, want :8443", v)
	}
	api := r.Find("APIService", "v1alpha1.visibility.koord-queue.x-k8s.io")
	if api == nil {
		t.Fatal("APIService v1alpha1.visibility.koord-queue.x-k8s.io not rendered")
	}
	spec, _ := api.Object["spec"].(map[string]any)
	// By default kube-apiserver verifies the server: a caBundle, no insecureSkipTLSVerify.
	caBundle, _ := spec["caBundle"].(string)
	want := map[string]any{
		"group": "visibility.koord-queue.x-k8s.io", "version": "v1alpha1",
		"groupPriorityMinimum": int64(100), "versionPriority": int64(100), "caBundle": caBundle,
		"service": map[string]any{"name": "koord-queue-visibility-server", "namespace": Namespace, "port": int64(443)},
	}
	if diff := cmp.Diff(want, spec); diff != "" {
		t.Errorf("APIService spec (-want +got):\n%s", diff)
	}
	checkVisibilityCert(t, r, caBundle)
	if v, _ := flag(c.Args, "visibility-cert-dir"); v != "/etc/koord-queue-visibility" {
		t.Errorf("--visibility-cert-dir=%q, want the Secret's mount", v)
	}
	checkSecretMount(t, r.deployment(t, "koord-queue").Spec.Template.Spec, c, "koord-queue-visibility-tls", "/etc/koord-queue-visibility")
	svc := &corev1.Service{}
	r.Into(t, "Service", "koord-queue-visibility-server", svc)
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].TargetPort.StrVal != "visibility" {
		t.Errorf("visibility Service ports: %+v", svc.Spec.Ports)
	}
	if svc.Spec.Selector["app.kubernetes.io/name"] != "koord-queue" {
		t.Errorf("visibility Service selects %v", svc.Spec.Selector)
	}
	crb := r.Find("ClusterRoleBinding", "koord-queue-visibility-auth-delegator")
	if crb == nil || crb.Object["roleRef"].(map[string]any)["name"] != "system:auth-delegator" {
		t.Errorf("no ClusterRoleBinding to system:auth-delegator: %v", crb)
	}
	rb := r.Find("RoleBinding", "koord-queue-visibility-auth-reader")
	if rb == nil || rb.GetNamespace() != "kube-system" || rb.Object["roleRef"].(map[string]any)["name"] != "extension-apiserver-authentication-reader" {
		t.Errorf("no kube-system RoleBinding to extension-apiserver-authentication-reader: %v", rb)
	}
	// Every authenticated user may read the quotas: list for all, get for one.
	reader := &rbacv1.ClusterRole{}
	r.Into(t, "ClusterRole", "koord-queue-visibility-reader", reader)
	if !slices.ContainsFunc(reader.Rules, func(p rbacv1.PolicyRule) bool {
		return slices.Equal(p.Resources, []string{"quotas"}) && slices.Equal(p.Verbs, []string{"get", "list"})
	}) {
		t.Errorf("koord-queue-visibility-reader grants no get and list on quotas: %+v", reader.Rules)
	}

	// The web view is off unless asked for: no flag, no RBAC for resource ui.
	if _, ok := flag(c.Args, "visibility-ui"); ok {
		t.Errorf("--visibility-ui passed by default: %v", c.Args)
	}
	grantsUI := func(rules []rbacv1.PolicyRule) bool {
		return slices.ContainsFunc(rules, func(p rbacv1.PolicyRule) bool {
			return slices.Contains(p.Resources, "ui") && slices.Equal(p.Verbs, []string{"get", "list"}) &&
				slices.Equal(p.APIGroups, []string{"visibility.koord-queue.x-k8s.io"})
		})
	}
	if grantsUI(reader.Rules) {
		t.Errorf("koord-queue-visibility-reader grants resource ui with the web view off: %+v", reader.Rules)
	}
	rui := render(t, "controller.enableVisibilityServer=true", "controller.visibility.ui.enabled=true")
	if v, _ := flag(container(t, rui.deployment(t, "koord-queue"), "controller").Args, "visibility-ui"); v != "true" {
		t.Errorf("controller.visibility.ui.enabled=true: --visibility-ui=%q, want true", v)
	}
	uiReader := &rbacv1.ClusterRole{}
	rui.Into(t, "ClusterRole", "koord-queue-visibility-reader", uiReader)
	if !grantsUI(uiReader.Rules) {
		t.Errorf("with the web view koord-queue-visibility-reader grants no get and list on ui: %+v", uiReader.Rules)
	}
	// Without the visibility server there is nothing to serve the view.
	if _, ok := flag(container(t, render(t, "controller.visibility.ui.enabled=true").deployment(t, "koord-queue"), "controller").Args, "visibility-ui"); ok {
		t.Error("--visibility-ui passed without the visibility server")
	}

	// A CA bundle of one's own: the Secret is the user's to make, still mounted.
	r = render(t, "controller.enableVisibilityServer=true", "controller.visibility.caBundle=PEM")
	spec = r.Find("APIService", "v1alpha1.visibility.koord-queue.x-k8s.io").Object["spec"].(map[string]any)
	if spec["caBundle"] != "UEVN" || spec["insecureSkipTLSVerify"] != nil {
		t.Errorf("with a caBundle: caBundle=%v insecureSkipTLSVerify=%v", spec["caBundle"], spec["insecureSkipTLSVerify"])
	}
	if r.Find("Secret", "koord-queue-visibility-tls") != nil {
		t.Error("with a caBundle of one's own the chart still renders the certificate Secret")
	}
	c = container(t, r.deployment(t, "koord-queue"), "controller")
	checkSecretMount(t, r.deployment(t, "koord-queue").Spec.Template.Spec, c, "koord-queue-visibility-tls", "/etc/koord-queue-visibility")

	// Skipping verification is an explicit choice: no Secret, no certificate folder.
	r = render(t, "controller.enableVisibilityServer=true", "controller.visibility.insecureSkipTLSVerify=true")
	spec = r.Find("APIService", "v1alpha1.visibility.koord-queue.x-k8s.io").Object["spec"].(map[string]any)
	if spec["insecureSkipTLSVerify"] != true || spec["caBundle"] != nil {
		t.Errorf("insecureSkipTLSVerify=true: caBundle=%v insecureSkipTLSVerify=%v", spec["caBundle"], spec["insecureSkipTLSVerify"])
	}
	c = container(t, r.deployment(t, "koord-queue"), "controller")
	if _, ok := flag(c.Args, "visibility-cert-dir"); ok || r.Find("Secret", "koord-queue-visibility-tls") != nil {
		t.Errorf("insecureSkipTLSVerify=true still passes a certificate: args %v", c.Args)
	}
}

func TestImagesAndKnobs(t *testing.T) {
	r := render(t,
		"global.imagePrefix=my.registry.example/team/",
		"controller.image.tag=",
		"extension.koord-queue-controllers.tag=v9",
		"controller.replicas=2",
		"controller.logLevel=4",
		"controller.featureGates=QueueUnitActive=true",
		"controller.qps=300",
		"controller.extraArgs={--status-workers=16}",
		"controller.leaderElection.leaseDuration=30s",
		"controller.nodeSelector.pool=system",
		"extension.koord-queue-controllers.extraArgs={--manage-all-jobs}",
		"extension.koord-queue-controllers.managedJobsNamespaceSelector=team in (a\\,b)",
		"extension.koord-queue-controllers.defaultQuota=team-default",
		"extension.koord-queue-controllers.leaderElection.enabled=false",
	)
	sched := r.deployment(t, "koord-queue")
	c := container(t, sched, "controller")
	if want := "my.registry.example/team/koordinator-sh/koord-queue:" + appVersion(t); c.Image != want {
		t.Errorf("image %s, want %s (empty tag means appVersion)", c.Image, want)
	}
	if *sched.Spec.Replicas != 2 || sched.Spec.Template.Spec.NodeSelector["pool"] != "system" {
		t.Errorf("replicas %d nodeSelector %v", *sched.Spec.Replicas, sched.Spec.Template.Spec.NodeSelector)
	}
	for name, want := range map[string]string{"v": "4", "feature-gates": "QueueUnitActive=true", "qps": "300", "burst": "200", "status-workers": "16", "leader-elect-lease-duration": "30s"} {
		if got, _ := flag(c.Args, name); got != want {
			t.Errorf("koord-queue --%s=%q, want %q", name, got, want)
		}
	}
	m := container(t, r.deployment(t, "koord-queue-controllers"), "manager")
	if want := "my.registry.example/team/koordinator-sh/koord-queue-controllers:v9"; m.Image != want {
		t.Errorf("image %s, want %s", m.Image, want)
	}
	if got, _ := flag(m.Args, "leader-elect"); got != "false" || m.Args[len(m.Args)-1] != "--manage-all-jobs" {
		t.Errorf("controllers args %v", m.Args)
	}
	for name, want := range map[string]string{"managed-jobs-namespace-selector": "team in (a,b)", "default-quota": "team-default"} {
		if got, _ := flag(m.Args, name); got != want {
			t.Errorf("koord-queue-controllers --%s=%q, want %q", name, got, want)
		}
	}

	r = render(t, "global.imagePrefix=")
	if c := container(t, r.deployment(t, "koord-queue"), "controller"); c.Image != "koordinator-sh/koord-queue:"+appVersion(t) {
		t.Errorf("image without prefix: %s", c.Image)
	}
	if r.Find("CustomResourceDefinition", "elasticquotas.scheduling.sigs.k8s.io") == nil {
		t.Error("ElasticQuota CRD not rendered by default")
	}
	if r := render(t, "installElasticQuotaCRD=false"); r.Find("CustomResourceDefinition", "elasticquotas.scheduling.sigs.k8s.io") != nil {
		t.Error("ElasticQuota CRD rendered with installElasticQuotaCRD=false")
	}
}

func TestMonitoring(t *testing.T) {
	r := render(t, "metrics.serviceMonitor.enabled=true", "metrics.serviceMonitor.labels.release=prom", "grafana.dashboard.enabled=true")
	sm := r.Find("ServiceMonitor", "koord-queue")
	if sm == nil || sm.GetLabels()["release"] != "prom" {
		t.Fatalf("ServiceMonitor: %v", sm)
	}
	// The units' namespace label stays namespace, which the dashboard's
	// variable reads, instead of exported_namespace.
	if eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints"); len(eps) != 1 || eps[0].(map[string]any)["honorLabels"] != true {
		t.Errorf("ServiceMonitor endpoints %v, want one with honorLabels", eps)
	}
	for _, name := range []string{"koord-queue-metrics", "koord-queue-controllers-metrics"} {
		svc := &corev1.Service{}
		r.Into(t, "Service", name, svc)
		if svc.Spec.Ports[0].TargetPort.StrVal != "metrics" {
			t.Errorf("%s targets %v", name, svc.Spec.Ports[0].TargetPort)
		}
	}
	cm := &corev1.ConfigMap{}
	r.Into(t, "ConfigMap", "koord-queue-grafana-dashboard", cm)
	if cm.Labels["grafana_dashboard"] != "1" {
		t.Errorf("dashboard labels %v", cm.Labels)
	}
	var dash map[string]any
	if err := json.Unmarshal([]byte(cm.Data["koord-queue.json"]), &dash); err != nil {
		t.Fatalf("dashboard is not JSON: %v", err)
	}
	// The dashboard is config/grafana/koord-queue.json once it exists; until
	// then the chart carries a placeholder. The lead wires the real file in
	// (make chart-crds copies it) and this becomes an exact comparison.
	src := filepath.Join(framework.RepoRoot(), "config", "grafana", "koord-queue.json")
	if data, err := os.ReadFile(src); err == nil {
		if strings.TrimRight(string(data), "\n") != strings.TrimRight(cm.Data["koord-queue.json"], "\n") {
			t.Errorf("dashboard ConfigMap differs from %s: run 'make chart-crds'", src)
		}
	} else if dash["uid"] != "koord-queue" {
		t.Errorf("placeholder dashboard uid %v", dash["uid"])
	}
}

// TestVerifyChartCatchesDrift runs hack/verify-chart.sh on the chart (it must
// pass) and on a copy whose CRD was edited (it must fail).
func TestVerifyChartCatchesDrift(t *testing.T) {
	script := filepath.Join(framework.RepoRoot(), "hack", "verify-chart.sh")
	env := append(os.Environ(), "HELM="+helm(t))
	run := func(dir string) ([]byte, error) {
		cmd := exec.Command(script, dir)
		cmd.Env = env
		return cmd.CombinedOutput()
	}
	if out, err := run(chartDir()); err != nil {
		t.Fatalf("verify-chart.sh fails on the chart: %v\n%s", err, out)
	}
	for name, edit := range map[string]func(dir string) error{
		"crd edited": func(dir string) error {
			f := filepath.Join(dir, "files", "crds", "scheduling.x-k8s.io_queues.yaml")
			data, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			return os.WriteFile(f, append(data, []byte("# edited by hand\n")...), 0o600)
		},
		"crd removed": func(dir string) error {
			return os.Remove(filepath.Join(dir, "files", "crds", "scheduling.x-k8s.io_queueunits.yaml"))
		},
		"values table stale": func(dir string) error {
			f := filepath.Join(dir, "values.yaml")
			data, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			return os.WriteFile(f, []byte(strings.Replace(string(data), "replicas: 1", "replicas: 3", 1)), 0o600)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "koord-queue")
			if out, err := exec.Command("cp", "-R", chartDir(), dir).CombinedOutput(); err != nil {
				t.Fatalf("copy chart: %v: %s", err, out)
			}
			if err := edit(dir); err != nil {
				t.Fatal(err)
			}
			if out, err := run(dir); err == nil {
				t.Fatalf("verify-chart.sh passed on a drifted chart:\n%s", out)
			}
		})
	}
}
