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

package jobext

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	sparkv1beta2 "github.com/kubeflow/spark-operator/v2/api/v1beta2"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/app"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/webhook"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/workflow"
	itframework "github.com/koordinator-sh/koord-queue/test/integration/framework"
	"github.com/koordinator-sh/koord-queue/test/util/proc"
)

// allExtensions are every extension, each served by the webhook.
var allExtensions = []string{"job", "tfjob", "pytorchjob", "mpijob", "rayjob", "rayjobv1alpha1", "raycluster", "sparkapp", "workflow", "jobset"}

// webhookCluster is a manager serving the webhook, reached by the test API
// server through a MutatingWebhookConfiguration made as the chart makes it
// (URL instead of Service, failurePolicy Ignore) and kept by the binary.
type webhookCluster struct {
	c        client.Client
	ns       string // intercepted, watched
	release  string // the release namespace: never intercepted
	config   string
	selector string
}

// startWebhook runs koord-queue-controllers with the webhook on a free port
// and waits until a dry-run creation of a labelled Job comes back suspended
// (extensions must include job).
func startWebhook(t *testing.T, extensions []string, mutate func(*app.Options)) *webhookCluster {
	t.Helper()
	return startWebhookWith(t, env.Config, extensions, mutate)
}

// startWebhookWith is startWebhook with the manager talking to the API
// server through restConfig.
func startWebhookWith(t *testing.T, restConfig *rest.Config, extensions []string, mutate func(*app.Options)) *webhookCluster {
	t.Helper()
	c := k8s(t)
	ctx := context.Background()
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	w := &webhookCluster{c: c, release: createNamespace(t, c, nil)}
	w.config = "kq-test-" + w.release
	failIgnore := admissionregistrationv1.Ignore
	sideNone := admissionregistrationv1.SideEffectClassNone
	var rules []admissionregistrationv1.RuleWithOperations
	for _, r := range []struct{ group, version, resource string }{
		{"batch", "v1", "jobs"}, {"kubeflow.org", "v1", "tfjobs"}, {"kubeflow.org", "v1", "pytorchjobs"}, {"kubeflow.org", "v2beta1", "mpijobs"},
		{"ray.io", "v1", "rayjobs"}, {"ray.io", "v1alpha1", "rayjobs"}, {"ray.io", "v1", "rayclusters"},
		{"sparkoperator.k8s.io", "v1beta2", "sparkapplications"}, {"argoproj.io", "v1alpha1", "workflows"},
		{"jobset.x-k8s.io", "v1alpha2", "jobsets"}, {"leaderworkerset.x-k8s.io", "v1", "leaderworkersets"}, {"trainer.kubeflow.org", "v1alpha1", "trainjobs"},
	} {
		rules = append(rules, admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{r.group}, APIVersions: []string{r.version}, Resources: []string{r.resource}},
		})
	}
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: w.config},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "jobs.koord-queue.x-k8s.io",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				URL: ptr.To(fmt.Sprintf("https://127.0.0.1:%d%s", port, webhook.Path)),
			},
			Rules:                   rules,
			FailurePolicy:           &failIgnore,
			SideEffects:             &sideNone,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](5),
			// Matches nothing until the binary writes its selector.
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kq-test": "nothing"}},
		}},
	}
	if err := c.Create(ctx, cfg); err != nil {
		t.Fatalf("create webhook configuration: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), cfg) })
	_, w.ns = startManagerWith(t, restConfig, extensions, func(o *appOptions) {
		o.WebhookPort = port
		o.WebhookHost = "127.0.0.1"
		o.WebhookServiceName = ""
		o.WebhookCertHosts = []string{"127.0.0.1"}
		o.WebhookConfigurationName = w.config
		o.ReleaseNamespace = w.release
		// Only this test's namespaces: other tests share the API server.
		w.selector = fmt.Sprintf("kubernetes.io/metadata.name in (%s,%s)", o.WatchNamespaces[0], w.release)
		o.ManagedJobsNamespaceSelector = w.selector
		if mutate != nil {
			mutate(o)
		}
	})
	eventually(t, "webhook serving", func(ctx context.Context) (bool, error) {
		probe := batchJob(w.ns, "probe", false, quotaLabels())
		if err := c.Create(ctx, probe, client.DryRunAll); err != nil {
			return false, err
		}
		return ptr.Deref(probe.Spec.Suspend, false), nil
	})
	return w
}

// webhookKinds: for each kind, a job as the user writes it with the label
// only, its native suspension read back independently of the extension.
type webhookKind struct {
	kindCase
	unsuspended func(ns string) client.Object
}

func webhookKinds() []webhookKind {
	var out []webhookKind
	cases := append(append(kubeflowCases(), rayCases()...), sparkCase(), workflowCase(), mpiCase(), jobSetCase())
	reg := app.NewRegistry()
	for _, tc := range cases {
		ext := reg[tc.ext](framework.ExtensionOptions{Enabled: allExtensions})
		out = append(out, webhookKind{kindCase: tc, unsuspended: func(ns string) client.Object {
			obj := tc.newJob(ns)
			gj, err := ext.Wrap(obj)
			if err != nil {
				panic(err)
			}
			gj.Resume()
			return obj
		}})
	}
	batch := kindCase{
		ext: "job", kind: "Job",
		empty:   func() client.Object { return &batchv1.Job{} },
		suspend: func(o client.Object) bool { return ptr.Deref(o.(*batchv1.Job).Spec.Suspend, false) },
	}
	return append(out, webhookKind{kindCase: batch, unsuspended: func(ns string) client.Object {
		return batchJob(ns, "batch", false, quotaLabels())
	}})
}

// TestWebhookSuspendsAtCreation: for every kind, a job with the quota label
// but not suspended is stored suspended by its native field (the creation's
// answer is what was stored, before any reconcile), and gets its unit; the
// same job without the label, or in the release namespace, is stored as
// written.
func TestWebhookSuspendsAtCreation(t *testing.T) {
	w := startWebhook(t, allExtensions, nil)
	ctx := context.Background()
	for _, tc := range webhookKinds() {
		t.Run(tc.ext, func(t *testing.T) {
			obj := tc.unsuspended(w.ns)
			obj.SetName(obj.GetName() + "-" + tc.ext) // rayjob and rayjobv1alpha1 share a resource
			if tc.suspend(obj) {
				t.Fatalf("test job already suspended")
			}
			if err := w.c.Create(ctx, obj); err != nil {
				t.Fatalf("create: %v", err)
			}
			if !tc.suspend(obj) {
				t.Errorf("labelled %s stored unsuspended", tc.kind)
			}
			waitUnit(t, w.c, w.ns, framework.UnitName(&framework.Extension{Name: tc.ext, BareUnitName: tc.ext == "job"}, obj.GetName()), "queue unit", anyUnit)

			plain := tc.unsuspended(w.ns)
			plain.SetName(obj.GetName() + "-plain")
			plain.SetLabels(nil)
			if tc.ext == "workflow" {
				dropSuspendTemplate(plain)
			}
			if err := w.c.Create(ctx, plain); err != nil {
				t.Fatalf("create unlabelled: %v", err)
			}
			if tc.suspend(plain) {
				t.Errorf("unlabelled %s stored suspended", tc.kind)
			}

			released := tc.unsuspended(w.release)
			released.SetName(obj.GetName())
			if err := w.c.Create(ctx, released); err != nil {
				t.Fatalf("create in the release namespace: %v", err)
			}
			if tc.suspend(released) {
				t.Errorf("labelled %s in the release namespace stored suspended", tc.kind)
			}
		})
	}
}

func dropSuspendTemplate(o client.Object) {
	u := o.(*unstructured.Unstructured)
	unstructured.RemoveNestedField(u.Object, "spec", "templates")
	_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "main", "container": map[string]any{"image": "busybox"}}}, "spec", "templates")
}

// TestWebhookGuideForms: the guide's annotation-only SparkApplication and its
// Workflow with the koord-queue-suspend template (its spec.suspend removed)
// are held by the field their stock operators obey.
func TestWebhookGuideForms(t *testing.T) {
	w := startWebhook(t, []string{"job", "sparkapp", "workflow"}, nil)
	ctx := context.Background()
	spark := sparkCase().newJob(w.ns).(*sparkv1beta2.SparkApplication)
	if spark.Spec.Suspend != nil || spark.Annotations[schedv1alpha1.SuspendAnnotation] != "true" {
		t.Fatalf("test SparkApplication is not the annotation-only form")
	}
	if err := w.c.Create(ctx, spark); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(spark.Spec.Suspend, false) {
		t.Errorf("annotation-only SparkApplication stored with spec.suspend %v", spark.Spec.Suspend)
	}

	objs, err := itframework.ReadObjects(filepath.Join(itframework.RepoRoot(), "test", "testdata", "guide", "workflow.yaml"))
	if err != nil || len(objs) != 1 {
		t.Fatalf("read workflow.yaml: %v (%d objects)", err, len(objs))
	}
	wf := objs[0]
	wf.SetNamespace(w.ns)
	unstructured.RemoveNestedField(wf.Object, "spec", "suspend")
	if err := w.c.Create(ctx, wf); err != nil {
		t.Fatal(err)
	}
	if s, _, _ := unstructured.NestedBool(wf.Object, "spec", "suspend"); !s {
		t.Errorf("guide Workflow with the %s template stored with spec.suspend false", workflow.SuspendTemplate)
	}
}

// TestWebhookBadInput: a job the webhook cannot decode is created unchanged;
// a job naming a quota that does not exist is held and queued under it.
func TestWebhookBadInput(t *testing.T) {
	w := startWebhook(t, []string{"job", "tfjob"}, nil)
	ctx := context.Background()
	bad := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
		"metadata": map[string]any{"name": "garbled", "namespace": w.ns, "labels": map[string]any{schedv1alpha1.QuotaNameLabel: quota}},
		"spec":     map[string]any{"tfReplicaSpecs": "not a map"},
	}}
	if err := w.c.Create(ctx, bad); err != nil {
		t.Fatalf("an undecodable TFJob was refused: %v", err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(bad.Object, "spec", "runPolicy"); found {
		t.Errorf("undecodable TFJob was changed: spec %v", bad.Object["spec"])
	}

	missing := batchJob(w.ns, "no-quota", false, map[string]string{schedv1alpha1.QuotaNameLabel: "no-such-quota"})
	if err := w.c.Create(ctx, missing); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(missing.Spec.Suspend, false) {
		t.Error("job naming a missing quota stored unsuspended")
	}
	u := waitUnit(t, w.c, w.ns, "no-quota", "queue unit", anyUnit)
	if u.Spec.Queue != "no-such-quota" || u.Labels[schedv1alpha1.QuotaNameLabel] != "no-such-quota" {
		t.Errorf("unit queue %q labels %v, want the missing quota named", u.Spec.Queue, u.Labels)
	}
}

// TestWebhookManageAllJobs: with --manage-all-jobs an unlabelled job of a
// selected namespace is suspended at creation too.
func TestWebhookManageAllJobs(t *testing.T) {
	w := startWebhook(t, []string{"job"}, func(o *appOptions) { o.ManageAllJobs = true })
	j := batchJob(w.ns, "swept", false, nil)
	if err := w.c.Create(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(j.Spec.Suspend, false) {
		t.Error("unlabelled job under --manage-all-jobs stored unsuspended")
	}
}

// TestWebhookConfigurationKept: the binary writes its CA bundle and the
// namespace selector into the configuration, and keeps its certificate in a
// Secret of the release namespace.
func TestWebhookConfigurationKept(t *testing.T) {
	w := startWebhook(t, []string{"job"}, nil)
	ctx := context.Background()
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := w.c.Get(ctx, client.ObjectKey{Name: w.config}, cfg); err != nil {
		t.Fatal(err)
	}
	wh := cfg.Webhooks[0]
	if len(wh.ClientConfig.CABundle) == 0 {
		t.Error("no CA bundle injected")
	}
	sel, err := metav1.LabelSelectorAsSelector(wh.NamespaceSelector)
	if err != nil {
		t.Fatal(err)
	}
	for ns, want := range map[string]bool{w.ns: true, w.release: false, framework.KubeSystemNamespace: false, "other": false} {
		if got := sel.Matches(namespaceLabels(ns)); got != want {
			t.Errorf("webhook namespaceSelector %s selects %s = %v, want %v", sel, ns, got, want)
		}
	}
	secret := &corev1.Secret{}
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: w.release, Name: app.NewOptions().WebhookSecretName}, secret); err != nil {
		t.Errorf("certificate Secret in the release namespace: %v", err)
	}
}

func namespaceLabels(name string) labels.Set {
	return labels.Set{corev1.LabelMetadataName: name}
}
