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

package webhook_test

import (
	"sort"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/app"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/webhook"
)

// TestRulesNameTheServedResources: each rule's resource is the plural the
// API serves: for a CRD, the first part of its name (<plural>.<group>). It
// covers every extension the binary registers.
func TestRulesNameTheServedResources(t *testing.T) {
	reg := app.NewRegistry()
	names := make([]string, 0, len(reg))
	for n := range reg {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) < 8 {
		t.Fatalf("registry lists %d extensions (%v), want at least the 8 kinds", len(names), names)
	}
	exts := make([]framework.Extension, 0, len(names))
	for _, n := range names {
		if n != "pod" { // its own webhook: TestPodsWebhook
			exts = append(exts, reg[n](framework.ExtensionOptions{}))
		}
	}
	rules := webhook.Rules(append(exts, reg["pod"](framework.ExtensionOptions{})))
	if len(rules) != len(exts) {
		t.Fatalf("%d rules for %d kinds: pods must not be in the jobs webhook", len(rules), len(exts))
	}
	for i, ext := range exts {
		r := rules[i]
		want := "jobs"
		if ext.CRD != "" {
			want = strings.SplitN(ext.CRD, ".", 2)[0]
		}
		if got := r.Resources[0]; got != want || r.APIGroups[0] != ext.GVK.Group || r.APIVersions[0] != ext.GVK.Version {
			t.Errorf("%s: rule %v/%v/%v, want resource %s in %s", ext.Name, r.APIGroups, r.APIVersions, r.Resources, want, ext.GVK.GroupVersion())
		}
	}
}

// TestPodsWebhook: with extension pod, a second webhook asks for pod
// creations, and only of pods with the quota label, never failing them.
func TestPodsWebhook(t *testing.T) {
	reg := app.NewRegistry()
	job := reg["job"](framework.ExtensionOptions{})
	if cfg := webhook.Configuration("c", []framework.Extension{job}, admissionregistrationv1.WebhookClientConfig{}); len(cfg.Webhooks) != 1 {
		t.Fatalf("without extension pod: %d webhooks, want 1", len(cfg.Webhooks))
	}
	cfg := webhook.Configuration("c", []framework.Extension{job, reg["pod"](framework.ExtensionOptions{})}, admissionregistrationv1.WebhookClientConfig{})
	if len(cfg.Webhooks) != 2 {
		t.Fatalf("with extension pod: %d webhooks, want 2", len(cfg.Webhooks))
	}
	w := cfg.Webhooks[1]
	if w.Name != webhook.PodsName || len(w.Rules) != 1 || w.Rules[0].Resources[0] != "pods" || w.Rules[0].APIGroups[0] != "" {
		t.Errorf("pods webhook %s rules %+v", w.Name, w.Rules)
	}
	if *w.FailurePolicy != admissionregistrationv1.Ignore {
		t.Errorf("failurePolicy %s, want Ignore", *w.FailurePolicy)
	}
	sel, err := metav1.LabelSelectorAsSelector(w.ObjectSelector)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Matches(labels.Set{"app": "x"}) || !sel.Matches(labels.Set{schedv1alpha1.QuotaNameLabel: "q"}) {
		t.Errorf("objectSelector %s must match exactly the pods with the quota label", sel)
	}
	// Extension leaderworkerset holds its pods by the gate too: the same one
	// pods webhook, once, whether extension pod is on or not.
	lws := reg["leaderworkerset"](framework.ExtensionOptions{})
	for _, exts := range [][]framework.Extension{{job, lws}, {job, reg["pod"](framework.ExtensionOptions{}), lws}} {
		cfg := webhook.Configuration("c", exts, admissionregistrationv1.WebhookClientConfig{})
		if len(cfg.Webhooks) != 2 || cfg.Webhooks[1].Name != webhook.PodsName {
			t.Errorf("with %d extensions including leaderworkerset: %d webhooks, want jobs and pods", len(exts), len(cfg.Webhooks))
		}
	}
}
