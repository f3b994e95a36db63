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
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// checkVisibilityCert checks that caBundle (base64 PEM, as in the APIService)
// is a CA that signed the certificate in Secret koord-queue-visibility-tls for
// the name kube-apiserver dials: the visibility Service's DNS name.
func checkVisibilityCert(t *testing.T, r *Rendered, caBundle string) {
	t.Helper()
	caPEM, err := base64.StdEncoding.DecodeString(caBundle)
	if err != nil || len(caPEM) == 0 {
		t.Fatalf("APIService caBundle %q is not base64 PEM: %v", caBundle, err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatalf("APIService caBundle holds no certificate:\n%s", caPEM)
	}
	sec := &corev1.Secret{}
	r.Into(t, "Secret", "koord-queue-visibility-tls", sec)
	if sec.Type != corev1.SecretTypeTLS || len(sec.Data["tls.key"]) == 0 {
		t.Errorf("Secret koord-queue-visibility-tls: type %s, key %d bytes", sec.Type, len(sec.Data["tls.key"]))
	}
	block, _ := pem.Decode(sec.Data["tls.crt"])
	if block == nil {
		t.Fatalf("tls.crt is not PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	host := "koord-queue-visibility-server." + Namespace + ".svc"
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: host, Roots: roots}); err != nil {
		t.Errorf("the visibility certificate does not verify for %s against the APIService's caBundle: %v", host, err)
	}
}

// checkSecretMount checks that the pod mounts Secret secret at dir in c.
func checkSecretMount(t *testing.T, pod corev1.PodSpec, c corev1.Container, secret, dir string) {
	t.Helper()
	var volume string
	for _, v := range pod.Volumes {
		if v.Secret != nil && v.Secret.SecretName == secret {
			volume = v.Name
		}
	}
	for _, m := range c.VolumeMounts {
		if volume != "" && m.Name == volume && m.MountPath == dir && m.ReadOnly {
			return
		}
	}
	t.Errorf("container %s does not mount Secret %s read-only at %s: volumes %v mounts %v", c.Name, secret, dir, pod.Volumes, c.VolumeMounts)
}

// TestStatusPolicy renders the ValidatingAdmissionPolicy and its binding,
// checks they are the objects of config/policy for the guide's namespace, and
// that the value turns them off.
func TestStatusPolicy(t *testing.T) {
	r := render(t)
	vap := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	r.Into(t, "ValidatingAdmissionPolicy", "koord-queue-queueunit-status", vap)
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	r.Into(t, "ValidatingAdmissionPolicyBinding", "koord-queue-queueunit-status", binding)
	if binding.Spec.PolicyName != vap.Name || !slices.Equal(binding.Spec.ValidationActions, []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}) {
		t.Errorf("binding %+v does not deny with the policy", binding.Spec)
	}

	data, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "config", "policy", "queueunit-status.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	config := &Rendered{Raw: string(data), Objects: parseObjects(t, string(data))}
	cvap := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	config.Into(t, "ValidatingAdmissionPolicy", "koord-queue-queueunit-status", cvap)
	cbinding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	config.Into(t, "ValidatingAdmissionPolicyBinding", "koord-queue-queueunit-status", cbinding)
	if diff := cmp.Diff(cvap.Spec, vap.Spec); diff != "" {
		t.Errorf("chart policy differs from config/policy (-config +chart):\n%s", diff)
	}
	if diff := cmp.Diff(cbinding.Spec, binding.Spec); diff != "" {
		t.Errorf("chart binding differs from config/policy (-config +chart):\n%s", diff)
	}

	r = render(t, "queueUnitStatusPolicy.enabled=false")
	if r.Find("ValidatingAdmissionPolicy", vap.Name) != nil || r.Find("ValidatingAdmissionPolicyBinding", vap.Name) != nil {
		t.Error("queueUnitStatusPolicy.enabled=false still renders the policy")
	}
}

// TestUserRoles checks the tenant roles: aggregated into view and edit, and
// neither grants a write of any status subresource.
func TestUserRoles(t *testing.T) {
	r := render(t)
	view, edit := r.clusterRole(t, "koord-queue-view"), r.clusterRole(t, "koord-queue-edit")
	const agg = "rbac.authorization.k8s.io/aggregate-to-"
	if view.Labels[agg+"view"] != "true" || edit.Labels[agg+"edit"] != "true" {
		t.Errorf("aggregation labels: view %v, edit %v", view.Labels, edit.Labels)
	}
	for _, role := range []*rbacv1.ClusterRole{view, edit} {
		for _, res := range []string{"queueunits/status", "queues/status", "queueunits/*", "*"} {
			for _, verb := range []string{"update", "patch", "create", "delete"} {
				if allows(role.Rules, "scheduling.x-k8s.io", res, verb) {
					t.Errorf("%s grants %s on %s", role.Name, verb, res)
				}
			}
		}
		if allows(role.Rules, "scheduling.x-k8s.io", "queues", "update") {
			t.Errorf("%s lets tenants change Queues", role.Name)
		}
	}
	if !allows(edit.Rules, "scheduling.x-k8s.io", "queueunits", "patch") || !allows(view.Rules, "scheduling.x-k8s.io", "queueunits", "list") {
		t.Errorf("tenant roles miss QueueUnit access: view %v edit %v", view.Rules, edit.Rules)
	}
	reader := r.clusterRole(t, "koord-queue-metrics-reader")
	if diff := cmp.Diff([]rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}, reader.Rules); diff != "" {
		t.Errorf("koord-queue-metrics-reader rules (-want +got):\n%s", diff)
	}
	if r = render(t, "rbac.userRoles=false"); r.Find("ClusterRole", "koord-queue-edit") != nil {
		t.Error("rbac.userRoles=false still renders koord-queue-edit")
	}
}

// TestSecureScrape checks that both Prometheus Operator monitors scrape over
// HTTPS with the token of a ServiceAccount bound to the metrics reader role,
// and scrape plain HTTP with metrics.secure=false.
func TestSecureScrape(t *testing.T) {
	type endpoint struct {
		Scheme    string `json:"scheme"`
		TLSConfig *struct {
			InsecureSkipVerify bool `json:"insecureSkipVerify"`
		} `json:"tlsConfig"`
		Authorization *struct {
			Type        string `json:"type"`
			Credentials struct {
				Name string `json:"name"`
				Key  string `json:"key"`
			} `json:"credentials"`
		} `json:"authorization"`
	}
	endpoints := func(r *Rendered) []endpoint {
		var all []endpoint
		for kind, field := range map[string]string{"ServiceMonitor": "endpoints", "PodMonitor": "podMetricsEndpoints"} {
			o := r.Find(kind, "koord-queue")
			if o == nil {
				t.Fatalf("%s not rendered", kind)
			}
			var eps []endpoint
			data, _ := yaml.Marshal(o.Object["spec"].(map[string]any)[field])
			if err := yaml.Unmarshal(data, &eps); err != nil {
				t.Fatal(err)
			}
			all = append(all, eps...)
		}
		return all
	}
	on := []string{"metrics.serviceMonitor.enabled=true", "metrics.podMonitor.enabled=true"}
	r := render(t, on...)
	for _, ep := range endpoints(r) {
		if ep.Scheme != "https" || ep.TLSConfig == nil || !ep.TLSConfig.InsecureSkipVerify || ep.Authorization == nil ||
			ep.Authorization.Credentials.Name != "koord-queue-metrics-scraper-token" || ep.Authorization.Credentials.Key != "token" {
			t.Errorf("secure scrape endpoint %+v", ep)
		}
	}
	sec := &corev1.Secret{}
	r.Into(t, "Secret", "koord-queue-metrics-scraper-token", sec)
	if sec.Type != corev1.SecretTypeServiceAccountToken || sec.Annotations[corev1.ServiceAccountNameKey] != "koord-queue-metrics-scraper" {
		t.Errorf("scraper token Secret: type %s annotations %v", sec.Type, sec.Annotations)
	}
	crb := &rbacv1.ClusterRoleBinding{}
	r.Into(t, "ClusterRoleBinding", "koord-queue-metrics-scraper", crb)
	if crb.RoleRef.Name != "koord-queue-metrics-reader" || len(crb.Subjects) != 1 || crb.Subjects[0].Name != "koord-queue-metrics-scraper" {
		t.Errorf("scraper binding %+v", crb)
	}

	r = render(t, append(on, "metrics.secure=false")...)
	for _, ep := range endpoints(r) {
		if ep.Scheme != "http" || ep.Authorization != nil {
			t.Errorf("plain scrape endpoint %+v", ep)
		}
	}
	if r.Find("Secret", "koord-queue-metrics-scraper-token") != nil {
		t.Error("metrics.secure=false still renders the scraper's token")
	}
	c := container(t, r.deployment(t, "koord-queue"), "controller")
	if v, _ := flag(c.Args, "metrics-secure"); v != "false" {
		t.Errorf("metrics.secure=false: koord-queue --metrics-secure=%q", v)
	}
	checkProbes(t, c, "/healthz", "/readyz", 10259, corev1.URISchemeHTTP)
}

// TestAdmissionCheckWritersValue checks the render of
// queueUnitStatusPolicy.admissionCheckWriters: RBAC for the listed writers
// (none by default) and a clear refusal of entries that are not names.
func TestAdmissionCheckWritersValue(t *testing.T) {
	if r := render(t); r.Find("ClusterRoleBinding", "koord-queue-admission-check-writer") != nil {
		t.Error("the default render binds admission-check writers nobody listed")
	}
	r := render(t, "queueUnitStatusPolicy.admissionCheckWriters.serviceAccounts={checks/provisioner,other/prov}",
		"queueUnitStatusPolicy.admissionCheckWriters.groups={example.com:checkers}")
	crb := &rbacv1.ClusterRoleBinding{}
	r.Into(t, "ClusterRoleBinding", "koord-queue-admission-check-writer", crb)
	want := []rbacv1.Subject{
		{Kind: rbacv1.ServiceAccountKind, Name: "provisioner", Namespace: "checks"},
		{Kind: rbacv1.ServiceAccountKind, Name: "prov", Namespace: "other"},
		{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "example.com:checkers"},
	}
	if diff := cmp.Diff(want, crb.Subjects); diff != "" || crb.RoleRef.Name != "koord-queue-admission-check-writer" {
		t.Errorf("writers binding to %s, subjects (-want +got):\n%s", crb.RoleRef.Name, diff)
	}
	role := r.clusterRole(t, "koord-queue-admission-check-writer")
	if !allows(role.Rules, "scheduling.x-k8s.io", "queueunits/status", "patch") || !allows(role.Rules, "scheduling.x-k8s.io", "queueunits", "watch") {
		t.Errorf("writers role cannot watch units and patch their status: %v", role.Rules)
	}
	for _, res := range []string{"queueunits", "queues", "queues/status", "admissionchecks"} {
		if allows(role.Rules, "scheduling.x-k8s.io", res, "patch") || allows(role.Rules, "scheduling.x-k8s.io", res, "update") {
			t.Errorf("writers role may change %s", res)
		}
	}
	vap := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	r.Into(t, "ValidatingAdmissionPolicy", "koord-queue-queueunit-status", vap)
	found := false
	for _, v := range vap.Spec.Variables {
		if v.Name == "checkWriter" {
			found = strings.Contains(v.Expression, "'system:serviceaccount:checks:provisioner', 'system:serviceaccount:other:prov'") &&
				strings.Contains(v.Expression, "['example.com:checkers']")
		}
	}
	if !found {
		t.Errorf("policy variable checkWriter does not name the listed writers: %+v", vap.Spec.Variables)
	}

	for _, tc := range []struct{ set, want string }{
		{"queueUnitStatusPolicy.admissionCheckWriters.serviceAccounts={provisioner}", `serviceAccounts: "provisioner" is not <namespace>/<name>`},
		{"queueUnitStatusPolicy.admissionCheckWriters.serviceAccounts={a/b/c}", `"a/b/c" is not <namespace>/<name>`},
		{"queueUnitStatusPolicy.admissionCheckWriters.serviceAccounts=checks/provisioner", "serviceAccounts must be a list"},
		{"queueUnitStatusPolicy.admissionCheckWriters.groups={system:authenticated}", `"system:authenticated" would let everyone of it write`},
		{"queueUnitStatusPolicy.admissionCheckWriters.groups={it's}", "holds a quote or backslash"},
	} {
		if _, err := renderRaw(t, tc.set); err == nil || !strings.Contains(err.Error(), "queueUnitStatusPolicy.admissionCheckWriters") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--set %s: got %v, want an error saying %q", tc.set, err, tc.want)
		}
	}
}
