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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/app"
	jobframework "github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/webhook"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// The webhook's objects, as the chart names them.
const (
	webhookConfig = "koord-queue-controllers"
	webhookSecret = "koord-queue-controllers-webhook-cert"
)

// webhookNeeds: koord-queue-controllers manages its certificate in one named
// Secret and keeps one named webhook configuration.
func webhookNeeds() []access {
	return []access{
		{verb: "get", resource: "secrets", namespace: Namespace, name: webhookSecret},
		{verb: "update", resource: "secrets", namespace: Namespace, name: webhookSecret},
		{verb: "get", group: "admissionregistration.k8s.io", resource: "mutatingwebhookconfigurations", name: webhookConfig},
		{verb: "patch", group: "admissionregistration.k8s.io", resource: "mutatingwebhookconfigurations", name: webhookConfig},
	}
}

// webhookMustNot: nothing beyond those two objects.
func webhookMustNot() []access {
	mwc := "mutatingwebhookconfigurations.admissionregistration.k8s.io"
	a := []access{
		{verb: "get", resource: "secrets", namespace: Namespace, name: "another"},
		{verb: "update", resource: "secrets", namespace: Namespace, name: "another"},
		{verb: "delete", resource: "secrets", namespace: Namespace, name: webhookSecret},
		{verb: "get", group: "admissionregistration.k8s.io", resource: "mutatingwebhookconfigurations", name: "another"},
		{verb: "patch", group: "admissionregistration.k8s.io", resource: "mutatingwebhookconfigurations", name: "another"},
		{verb: "delete", group: "admissionregistration.k8s.io", resource: "mutatingwebhookconfigurations", name: webhookConfig},
		{verb: "patch", group: "admissionregistration.k8s.io", resource: "validatingwebhookconfigurations", name: webhookConfig},
	}
	a = append(a, accesses(Namespace, []string{"list", "watch", "create"}, "secrets")...)
	return append(a, accesses("", []string{"list", "watch", "create"}, mwc)...)
}

// checkWebhook proves the chart's webhook on the API server with
// koord-queue-controllers running as its ServiceAccount (listening on addr,
// its certificate also made for 127.0.0.1): the binary filled the chart's
// Secret and injected its CA; reached by URL (envtest routes no Service), the
// webhook stores a Job with the quota label and suspend: false suspended.
func checkWebhook(t *testing.T, env *framework.Env, addr string) {
	ctx := t.Context()
	c := env.Client
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	waitFor(t, "the CA injected into "+webhookConfig, time.Minute, func(ctx context.Context) (bool, error) {
		if ok, err := get(ctx, c, "", webhookConfig, cfg); !ok {
			return false, err
		}
		for _, w := range cfg.Webhooks {
			if len(w.ClientConfig.CABundle) == 0 {
				return false, nil
			}
		}
		return len(cfg.Webhooks) > 0, nil
	})
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: webhookSecret}, secret); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ca.crt", "ca.key", "tls.crt", "tls.key"} {
		if len(secret.Data[k]) == 0 {
			t.Errorf("Secret %s has no %s", webhookSecret, k)
		}
	}
	for i := range cfg.Webhooks {
		cfg.Webhooks[i].ClientConfig.Service = nil
		cfg.Webhooks[i].ClientConfig.URL = ptr.To(fmt.Sprintf("https://%s/mutate-jobs", addr))
	}
	if err := c.Update(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	newJob := func(name string) *batchv1.Job {
		return &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{schedv1alpha1.QuotaNameLabel: "team-a"}},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "test", Image: "busybox:stable"}},
			}}},
		}
	}
	waitFor(t, "the webhook to suspend a dry-run Job", time.Minute, func(ctx context.Context) (bool, error) {
		j := newJob("probe")
		if err := c.Create(ctx, j, client.DryRunAll); err != nil {
			return false, err
		}
		return ptr.Deref(j.Spec.Suspend, false), nil
	})
	j := newJob("label-only")
	if err := c.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(j.Spec.Suspend, false) {
		t.Errorf("Job %s with the quota label only was stored unsuspended", j.Name)
	}
}

// TestWebhookRender: the chart's webhook asks for the creations of exactly
// the enabled kinds, as the binary's own configuration does
// (webhook.Rules), with the settings the README promises; cert-manager
// replaces the self-managed Secret and its RBAC; off, nothing is rendered and
// the binary serves no webhook.
func TestWebhookRender(t *testing.T) {
	r := render(t, fullValues...)
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	r.Into(t, "MutatingWebhookConfiguration", webhookConfig, cfg)
	if len(cfg.Webhooks) != 2 {
		t.Fatalf("%d webhooks, want 2 (jobs, and pods with extension.pod.enable)", len(cfg.Webhooks))
	}
	// The pods webhook is the binary's, but for the clientConfig and the
	// namespaceSelector the binary writes.
	pods := cfg.Webhooks[1]
	want := webhook.PodWebhook(pods.ClientConfig)
	want.NamespaceSelector = pods.NamespaceSelector
	if diff := cmp.Diff(want, pods); diff != "" {
		t.Errorf("pods webhook (-binary's +chart's):\n%s", diff)
	}
	if off := render(t); len(off.webhookConfig(t).Webhooks) != 1 {
		t.Error("the pods webhook is rendered without extension.pod.enable")
	}
	w := cfg.Webhooks[0]
	reg := app.NewRegistry()
	var exts []jobframework.Extension
	for _, n := range []string{"job", "pod", "tfjob", "pytorchjob", "mpijob", "workflow", "sparkapp", "rayjob", "rayjobv1alpha1", "raycluster", "jobset", "leaderworkerset", "trainjob"} {
		exts = append(exts, reg[n](jobframework.ExtensionOptions{}))
	}
	if diff := cmp.Diff(webhook.Rules(exts), w.Rules); diff != "" {
		t.Errorf("rules (-binary's +chart's):\n%s", diff)
	}
	if w.Name != webhook.Name || ptr.Deref(w.FailurePolicy, "") != admissionregistrationv1.Ignore ||
		ptr.Deref(w.TimeoutSeconds, 0) != webhook.TimeoutSeconds || ptr.Deref(w.SideEffects, "") != admissionregistrationv1.SideEffectClassNone {
		t.Errorf("webhook %s: failurePolicy %v timeout %v sideEffects %v", w.Name, w.FailurePolicy, w.TimeoutSeconds, w.SideEffects)
	}
	if s := w.ClientConfig.Service; s == nil || s.Name != "koord-queue-controllers-webhook" || s.Namespace != Namespace || ptr.Deref(s.Path, "") != webhook.Path {
		t.Errorf("clientConfig %+v, want Service koord-queue-controllers-webhook path %s", w.ClientConfig, webhook.Path)
	}
	sel, err := metav1.LabelSelectorAsSelector(w.NamespaceSelector)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"kube-system", Namespace} {
		if sel.Matches(labels.Set{corev1.LabelMetadataName: ns}) {
			t.Errorf("namespaceSelector %s intercepts %s", sel, ns)
		}
	}
	if r.Find("Secret", webhookSecret) == nil || r.Find("Certificate", "koord-queue-controllers-webhook") != nil {
		t.Error("self-managed certificate: want the Secret and no Certificate")
	}

	cm := render(t, "extension.koord-queue-controllers.webhook.certManager.enabled=true")
	if cm.Find("Secret", webhookSecret) != nil || cm.Find("Role", webhookSecret) != nil {
		t.Error("with cert-manager the self-managed Secret or its Role is still rendered")
	}
	if cm.Find("Certificate", "koord-queue-controllers-webhook") == nil || cm.Find("Issuer", "koord-queue-controllers-webhook") == nil {
		t.Error("with cert-manager: no Certificate or Issuer")
	}
	cm.Into(t, "MutatingWebhookConfiguration", webhookConfig, cfg)
	if got := cfg.Annotations["cert-manager.io/inject-ca-from"]; got != Namespace+"/koord-queue-controllers-webhook" {
		t.Errorf("inject-ca-from = %q", got)
	}
	m := container(t, cm.deployment(t, "koord-queue-controllers"), "manager")
	dir, ok := flag(m.Args, "webhook-cert-dir")
	mounted := false
	for _, v := range m.VolumeMounts {
		mounted = mounted || (v.Name == "webhook-certs" && v.MountPath == dir)
	}
	if !ok || !mounted {
		t.Errorf("--webhook-cert-dir %q (set %v), mounts %+v", dir, ok, m.VolumeMounts)
	}

	off := render(t, "extension.koord-queue-controllers.webhook.enabled=false")
	if off.Find("MutatingWebhookConfiguration", webhookConfig) != nil || off.Find("Service", "koord-queue-controllers-webhook") != nil {
		t.Error("webhook off: configuration or Service still rendered")
	}
	if port, _ := flag(container(t, off.deployment(t, "koord-queue-controllers"), "manager").Args, "webhook-port"); port != "0" {
		t.Errorf("webhook off: --webhook-port=%q, want 0", port)
	}
}

func (r *Rendered) webhookConfig(t *testing.T) *admissionregistrationv1.MutatingWebhookConfiguration {
	t.Helper()
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	r.Into(t, "MutatingWebhookConfiguration", webhookConfig, cfg)
	return cfg
}
