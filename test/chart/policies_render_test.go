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
	"strconv"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
)

// TestSecurityContextIDs: the ids are values; null leaves each to the
// cluster (OpenShift's restricted policy refuses fixed ones), non-root stays.
func TestSecurityContextIDs(t *testing.T) {
	for _, tc := range []struct {
		name        string
		sets        []string
		user, group *int64
		fsGroup     *int64
	}{
		{name: "default", user: ptr.To[int64](65532), group: ptr.To[int64](65532), fsGroup: ptr.To[int64](65532)},
		{name: "own ids", sets: []string{"securityContext.runAsUser=1000680000", "securityContext.runAsGroup=0", "securityContext.fsGroup=1000680000"},
			user: ptr.To[int64](1000680000), group: ptr.To[int64](0), fsGroup: ptr.To[int64](1000680000)},
		{name: "left to the cluster", sets: []string{"securityContext.runAsUser=null", "securityContext.runAsGroup=null", "securityContext.fsGroup=null"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := render(t, tc.sets...)
			for _, d := range []string{"koord-queue", "koord-queue-controllers"} {
				ps := r.deployment(t, d).Spec.Template.Spec.SecurityContext
				if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot {
					t.Fatalf("%s: pod may run as root: %+v", d, ps)
				}
				for _, f := range []struct {
					what      string
					got, want *int64
				}{{"runAsUser", ps.RunAsUser, tc.user}, {"runAsGroup", ps.RunAsGroup, tc.group}, {"fsGroup", ps.FSGroup, tc.fsGroup}} {
					if (f.got == nil) != (f.want == nil) || (f.got != nil && *f.got != *f.want) {
						t.Errorf("%s: %s = %v, want %v", d, f.what, ptrString(f.got), ptrString(f.want))
					}
				}
			}
		})
	}
}

func ptrString(p *int64) string {
	if p == nil {
		return "unset"
	}
	return strconv.FormatInt(*p, 10)
}

// TestValuesSchema: values.schema.json makes a mistyped or unknown value fail
// the render, naming it; the defaults and every value the other chart tests
// set pass it (they render).
func TestValuesSchema(t *testing.T) {
	for _, tc := range []struct{ set, want string }{
		{"controller.replicas=two", "replicas"},
		{"controller.visibility.port=https", "port"},
		{"controler.replicas=2", "controler"},
		{"controller.replica=2", "replica"},
		{"extension.batchjob.enabled=true", "enabled"},
		{"securityContext.runAsUser=-1", "runAsUser"},
		{"controller.image.pullPolicy=Sometimes", "pullPolicy"},
	} {
		_, err := renderRaw(t, tc.set)
		if err == nil {
			t.Errorf("--set %s rendered; want the schema to refuse it", tc.set)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "schema") || !strings.Contains(msg, tc.want) {
			t.Errorf("--set %s: error does not say the schema refuses %q:\n%s", tc.set, tc.want, msg)
		}
	}
}

// TestVisibilityReplicas: with the visibility API on, koord-queue runs two
// replicas by default (an aggregated API that does not answer stalls
// namespace deletion), with a budget and a spread; replicas set by hand win.
func TestVisibilityReplicas(t *testing.T) {
	for _, tc := range []struct {
		name string
		sets []string
		want int32
	}{
		{"visibility off", nil, 1},
		{"visibility on", []string{"controller.enableVisibilityServer=true"}, 2},
		{"visibility on, one replica by hand", []string{"controller.enableVisibilityServer=true", "controller.replicas=1"}, 1},
		{"visibility off, three by hand", []string{"controller.replicas=3"}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := render(t, tc.sets...)
			d := r.deployment(t, "koord-queue")
			if d.Spec.Replicas == nil || *d.Spec.Replicas != tc.want {
				t.Fatalf("replicas %v, want %d", d.Spec.Replicas, tc.want)
			}
			c := container(t, d, "controller")
			if v, _ := flag(c.Args, "leader-elect"); v != "true" {
				t.Errorf("--leader-elect=%q: replicas would admit side by side", v)
			}
			multi := tc.want > 1
			if got := r.Find("PodDisruptionBudget", "koord-queue") != nil; got != multi {
				t.Errorf("PodDisruptionBudget rendered %v, want %v", got, multi)
			}
			if got := len(d.Spec.Template.Spec.TopologySpreadConstraints) > 0; got != multi {
				t.Errorf("topology spread %v, want %v", got, multi)
			}
			// NOTES.txt warns of one replica serving the visibility API.
			warn := strings.Contains(notes(t, tc.sets...), "namespace deletion hangs cluster-wide")
			if visibility := len(tc.sets) > 0 && tc.sets[0] == "controller.enableVisibilityServer=true"; warn != (visibility && !multi) {
				t.Errorf("NOTES.txt warns of one visibility replica: %v", warn)
			}
		})
	}
}

// TestVisibilityCertStableAcrossRenders: with cert-manager or a CA bundle of
// one's own, two renders are the same, so a GitOps tool sees no diff; the
// APIService then gets its CA from cert-manager's injector.
func TestVisibilityCertStableAcrossRenders(t *testing.T) {
	for _, sets := range [][]string{
		{"controller.enableVisibilityServer=true", "controller.visibility.certManager.enabled=true"},
		{"controller.enableVisibilityServer=true", "controller.visibility.caBundle=PEM"},
	} {
		first, second := render(t, sets...), render(t, sets...)
		if first.Raw != second.Raw {
			t.Errorf("--set %v: two renders differ", sets)
		}
	}

	r := render(t, "controller.enableVisibilityServer=true", "controller.visibility.certManager.enabled=true")
	if r.Find("Secret", "koord-queue-visibility-tls") != nil {
		t.Error("with cert-manager the chart still renders a certificate Secret")
	}
	api := r.Find("APIService", "v1alpha1.visibility.koord-queue.x-k8s.io")
	if got := api.GetAnnotations()["cert-manager.io/inject-ca-from"]; got != Namespace+"/koord-queue-visibility" {
		t.Errorf("APIService inject-ca-from %q, want %s/koord-queue-visibility", got, Namespace)
	}
	if spec := api.Object["spec"].(map[string]any); spec["caBundle"] != nil || spec["insecureSkipTLSVerify"] != nil {
		t.Errorf("APIService spec with cert-manager: %v", spec)
	}
	cert := r.Find("Certificate", "koord-queue-visibility")
	if cert == nil {
		t.Fatal("no Certificate koord-queue-visibility")
	}
	spec := cert.Object["spec"].(map[string]any)
	host := "koord-queue-visibility-server." + Namespace + ".svc"
	if spec["secretName"] != "koord-queue-visibility-tls" || !containsAny(spec["dnsNames"], host) {
		t.Errorf("Certificate spec %v: want Secret koord-queue-visibility-tls for %s", spec, host)
	}
	if r.Find("Issuer", "koord-queue-visibility") == nil {
		t.Error("no self-signed Issuer without an issuerRef")
	}
	d := r.deployment(t, "koord-queue")
	checkSecretMount(t, d.Spec.Template.Spec, container(t, d, "controller"), "koord-queue-visibility-tls", "/etc/koord-queue-visibility")

	r = render(t, "controller.enableVisibilityServer=true", "controller.visibility.certManager.enabled=true",
		"controller.visibility.certManager.issuerRef.kind=ClusterIssuer", "controller.visibility.certManager.issuerRef.name=my-ca")
	if r.Find("Issuer", "koord-queue-visibility") != nil {
		t.Error("a self-signed Issuer beside the issuerRef given")
	}
	ref := r.Find("Certificate", "koord-queue-visibility").Object["spec"].(map[string]any)["issuerRef"]
	if m, _ := ref.(map[string]any); m["kind"] != "ClusterIssuer" || m["name"] != "my-ca" {
		t.Errorf("Certificate issuerRef %v, want ClusterIssuer my-ca", ref)
	}
}

func containsAny(list any, want string) bool {
	items, _ := list.([]any)
	for _, it := range items {
		if it == want {
			return true
		}
	}
	return false
}
