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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// The ServiceAccounts of the chart, as the API server names them.
const (
	schedulerSA   = "system:serviceaccount:" + Namespace + ":koord-queue"
	controllersSA = "system:serviceaccount:" + Namespace + ":koord-queue-controllers"
)

// fullValues turns on everything that a plain kube-apiserver can take (the
// ServiceMonitor needs the Prometheus Operator's CRDs, so it stays off).
var fullValues = []string{
	"extension.tf.enable=true", "extension.pytorch.enable=true", "extension.mpi.enable=true", "extension.jobset.enable=true", "extension.trainjob.enable=true", "extension.argo.enable=true",
	"extension.spark.enable=true", "extension.ray.enable=true", "extension.raycluster.enable=true", "extension.pod.enable=true",
	"extension.leaderworkerset.enable=true",
	"controller.enableVisibilityServer=true", "controller.visibility.ui.enabled=true", "grafana.dashboard.enabled=true",
}

// TestOnAPIServer applies the chart server-side to a real kube-apiserver,
// then proves each ServiceAccount's RBAC there, and finally runs both binaries
// as those ServiceAccounts through the guide's quick start.
func TestOnAPIServer(t *testing.T) {
	env := startControlPlane(t)
	r := render(t, fullValues...)
	kc := applyChart(t, env, r)

	t.Run("RBAC by SubjectAccessReview", func(t *testing.T) { checkAccessReviews(t, env.Clientset) })
	t.Run("RBAC by impersonated calls", func(t *testing.T) { checkImpersonatedCalls(t, env) })
	t.Run("web view RBAC: every user opens the page", func(t *testing.T) { checkWebViewAccess(t, env.Clientset) })
	t.Run("attack: tenants write status.phase=Dequeued", func(t *testing.T) { checkStatusWriters(t, env) })

	// Nothing serves the visibility API here; without the APIService the
	// binaries' discovery is clean.
	if _, err := kc("delete", "apiservice", "v1alpha1.visibility.koord-queue.x-k8s.io"); err != nil {
		t.Fatal(err)
	}
	t.Run("binaries as the chart's ServiceAccounts", func(t *testing.T) { runBinaries(t, env, r, "") })
}

// startControlPlane starts etcd and kube-apiserver for the test.
func startControlPlane(t *testing.T) *framework.Env {
	t.Helper()
	env, err := framework.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop control plane: %v", err)
		}
	})
	return env
}

// applyChart applies the rendered chart server-side as `helm install
// --create-namespace` would, checks that the API server holds every object,
// and returns a kubectl bound to the control plane as its admin.
func applyChart(t *testing.T, env *framework.Env, r *Rendered) func(args ...string) (string, error) {
	t.Helper()
	kubectlBin := kubectl(t)
	ctx := t.Context()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "admin.kubeconfig")
	if err := env.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	manifests := filepath.Join(dir, "koord-queue.yaml")
	if err := os.WriteFile(manifests, []byte(r.Raw), 0o600); err != nil {
		t.Fatal(err)
	}
	// `helm install --create-namespace` makes the release namespace.
	if _, err := env.Clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kc := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, kubectlBin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return string(out), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, stderr.String())
		}
		return string(out), nil
	}
	// The envtest control plane installed config/crd already; the chart's
	// copies are applied over them (same content, another field manager).
	if out, err := kc("apply", "--server-side", "--force-conflicts", "--field-manager=koord-queue-chart-test", "-f", manifests); err != nil {
		t.Fatalf("server-side apply of the chart: %v\n%s", err, out)
	}
	out, err := kc("get", "-f", manifests, "-o", "name")
	if err != nil {
		t.Fatalf("read back the applied objects: %v", err)
	}
	if got := len(strings.Fields(out)); got != len(r.Objects) {
		t.Fatalf("applied %d objects, the API server has %d:\n%s", len(r.Objects), got, out)
	}
	t.Logf("server-side applied %d objects: %v", len(r.Objects), r.Kinds())
	return kc
}

type access struct {
	verb, group, resource, namespace string
	// name, when set, is the one object asked about.
	name string
}

func (a access) String() string {
	return fmt.Sprintf("%s %s.%s %q in %q", a.verb, a.resource, a.group, a.name, a.namespace)
}

// res splits "resource.group" ("pods" is core, "jobs.batch", "queueunits/status.scheduling.x-k8s.io").
func accesses(ns string, verbs []string, resources ...string) []access {
	var out []access
	for _, r := range resources {
		res, group, _ := strings.Cut(r, ".")
		for _, v := range verbs {
			out = append(out, access{verb: v, group: group, resource: res, namespace: ns})
		}
	}
	return out
}

// leaseWatch is the list and watch of one Lease by name (a standby's
// watch, with the field selector metadata.name).
func leaseWatch(name string) []access {
	return []access{
		{verb: "list", group: "coordination.k8s.io", resource: "leases", namespace: Namespace, name: name},
		{verb: "watch", group: "coordination.k8s.io", resource: "leases", namespace: Namespace, name: name},
	}
}

var (
	read  = []string{"get", "list", "watch"}
	write = []string{"create", "update", "patch", "delete"}
)

// schedulerNeeds is what koord-queue calls, and schedulerMustNot a few
// things it must not be able to do.
func schedulerNeeds() []access {
	var a []access
	a = append(a, accesses("default", read, "queueunits.scheduling.x-k8s.io", "elasticquotas.scheduling.sigs.k8s.io")...)
	a = append(a, accesses("", read, "admissionchecks.scheduling.x-k8s.io", "provisioningrequestconfigs.scheduling.x-k8s.io",
		"priorityclasses.scheduling.k8s.io", "namespaces", "nodes")...)
	// Pods koord-queue does not manage count against their quota (SPEC 5.1).
	a = append(a, accesses("default", read, "pods")...)
	a = append(a, accesses(Namespace, append(read, write...), "queues.scheduling.x-k8s.io")...)
	a = append(a, accesses("default", []string{"update", "patch"}, "queueunits/status.scheduling.x-k8s.io", "queues/status.scheduling.x-k8s.io")...)
	a = append(a, accesses("", []string{"create"}, "namespaces", "tokenreviews.authentication.k8s.io", "subjectaccessreviews.authorization.k8s.io")...)
	a = append(a, accesses("default", []string{"create", "patch"}, "events", "events.events.k8s.io")...)
	a = append(a, accesses(Namespace, []string{"get", "create", "update"}, "leases.coordination.k8s.io")...)
	a = append(a, leaseWatch("koord-queue")...)
	// API Priority and Fairness of the visibility server.
	a = append(a, accesses("", []string{"list", "watch"}, "flowschemas.flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations.flowcontrol.apiserver.k8s.io")...)
	a = append(a, accesses("", []string{"patch"}, "flowschemas/status.flowcontrol.apiserver.k8s.io")...)
	// The front-proxy CA of delegated authentication, and that object only.
	for _, v := range read {
		a = append(a, access{verb: v, resource: "configmaps", namespace: "kube-system", name: "extension-apiserver-authentication"})
	}
	return a
}

func schedulerMustNot() []access {
	var a []access
	a = append(a, accesses("default", []string{"update", "patch", "delete", "create"}, "jobs.batch")...)
	a = append(a, accesses("default", []string{"delete", "create", "update"}, "pods", "queueunits.scheduling.x-k8s.io")...)
	a = append(a, accesses("default", []string{"get", "list"}, "secrets", "configmaps")...)
	a = append(a, access{verb: "get", resource: "configmaps", namespace: "kube-system", name: "kube-proxy"})
	a = append(a, accesses(Namespace, []string{"get"}, "secrets")...)
	a = append(a, accesses("default", []string{"update", "delete"}, "elasticquotas.scheduling.sigs.k8s.io")...)
	a = append(a, accesses("", []string{"delete"}, "namespaces")...)
	a = append(a, accesses("", []string{"update", "patch", "delete"}, "nodes")...)
	a = append(a, accesses("kube-system", []string{"update"}, "leases.coordination.k8s.io")...)
	// Its own Lease only: no list of every Lease of the namespace.
	a = append(a, accesses(Namespace, []string{"list", "watch"}, "leases.coordination.k8s.io")...)
	a = append(a, accesses("", write, "clusterroles.rbac.authorization.k8s.io", "customresourcedefinitions.apiextensions.k8s.io")...)
	// Reads API Priority and Fairness, never rewrites it.
	a = append(a, accesses("", []string{"create", "update", "delete"}, "flowschemas.flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations.flowcontrol.apiserver.k8s.io")...)
	return a
}

var jobKinds = []string{
	"jobs.batch", "tfjobs.kubeflow.org", "pytorchjobs.kubeflow.org", "mpijobs.kubeflow.org", "jobsets.jobset.x-k8s.io", "trainjobs.trainer.kubeflow.org", "workflows.argoproj.io",
	"sparkapplications.sparkoperator.k8s.io", "rayjobs.ray.io", "rayclusters.ray.io", "leaderworkersets.leaderworkerset.x-k8s.io",
}

func controllersNeed() []access {
	var a []access
	a = append(a, accesses("default", []string{"get", "list", "watch", "update", "patch"}, jobKinds...)...)
	for _, k := range jobKinds {
		res, group, _ := strings.Cut(k, ".")
		a = append(a, access{verb: "update", group: group, resource: res + "/finalizers", namespace: "default"})
	}
	a = append(a, accesses("default", append(read, write...), "queueunits.scheduling.x-k8s.io")...)
	a = append(a, accesses("default", []string{"update", "patch"}, "queueunits/status.scheduling.x-k8s.io")...)
	// Pod metadata: a deleted unit waits for its job's pods to go; LimitRange
	// defaults count in a unit's requests.
	a = append(a, accesses("default", read, "pods", "limitranges")...)
	// A TrainJob's pods are its training runtime's.
	a = append(a, accesses("default", read, "trainingruntimes.trainer.kubeflow.org")...)
	a = append(a, accesses("", read, "clustertrainingruntimes.trainer.kubeflow.org")...)
	// Extension pod: its gate goes on admission, an evicted pod is deleted.
	a = append(a, accesses("default", []string{"update", "patch", "delete"}, "pods")...)
	a = append(a, accesses("", read, "priorityclasses.scheduling.k8s.io")...)
	a = append(a, accesses("", read, "namespaces")...)
	// Secure metrics: the callers' tokens and access are reviewed.
	a = append(a, accesses("", []string{"create"}, "tokenreviews.authentication.k8s.io", "subjectaccessreviews.authorization.k8s.io")...)
	a = append(a, accesses("default", []string{"create", "patch"}, "events", "events.events.k8s.io")...)
	a = append(a, accesses(Namespace, []string{"get", "create", "update"}, "leases.coordination.k8s.io")...)
	a = append(a, leaseWatch("koord-queue-controllers")...)
	return append(a, webhookNeeds()...)
}

func controllersMustNot() []access {
	var a []access
	a = append(a, accesses(Namespace, []string{"delete", "create", "update", "get"}, "queues.scheduling.x-k8s.io")...)
	a = append(a, accesses("default", []string{"create", "delete"}, jobKinds...)...)
	a = append(a, accesses("default", write, "trainingruntimes.trainer.kubeflow.org")...)
	a = append(a, accesses("", write, "clustertrainingruntimes.trainer.kubeflow.org")...)
	a = append(a, accesses("default", []string{"get", "list"}, "secrets")...)
	a = append(a, accesses("default", []string{"delete", "create", "update", "patch"}, "limitranges")...)
	a = append(a, accesses("default", []string{"create"}, "pods", "pods/binding", "pods/eviction")...)
	a = append(a, accesses("default", []string{"update", "get"}, "elasticquotas.scheduling.sigs.k8s.io")...)
	a = append(a, accesses("", []string{"create"}, "namespaces")...)
	a = append(a, accesses("", []string{"update", "delete"}, "namespaces")...)
	a = append(a, accesses("default", []string{"update"}, "leases.coordination.k8s.io")...)
	a = append(a, accesses(Namespace, []string{"list", "watch"}, "leases.coordination.k8s.io")...)
	return append(a, webhookMustNot()...)
}

// checkAccessReviews asks the API server's authorizer (what `kubectl auth
// can-i --as` does) for every access each ServiceAccount needs or must lack.
func checkAccessReviews(t *testing.T, cs kubernetes.Interface) {
	for _, sa := range []struct {
		user         string
		need, mustNt []access
	}{
		{schedulerSA, schedulerNeeds(), schedulerMustNot()},
		{controllersSA, controllersNeed(), controllersMustNot()},
	} {
		for want, list := range map[bool][]access{true: sa.need, false: sa.mustNt} {
			for _, a := range list {
				sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
					User:   sa.user,
					Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + Namespace, "system:authenticated"},
					ResourceAttributes: &authorizationv1.ResourceAttributes{
						Namespace: a.namespace, Verb: a.verb, Group: a.group, Resource: resourceOf(a.resource), Subresource: subresourceOf(a.resource), Name: a.name,
					},
				}}
				got, err := cs.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), sar, metav1.CreateOptions{})
				if err != nil {
					t.Fatalf("SubjectAccessReview: %v", err)
				}
				if got.Status.Allowed != want {
					t.Errorf("%s: %s allowed=%v, want %v (%s)", sa.user, a, got.Status.Allowed, want, got.Status.Reason)
				}
			}
		}
		t.Logf("%s: %d needed accesses allowed, %d forbidden ones denied", sa.user, len(sa.need), len(sa.mustNt))
	}
}

// checkWebViewAccess: any authenticated user may get and list resource ui of
// the visibility group (kube-apiserver calls the page, .../ui/, a list and its
// files gets) and nothing else there beyond reads; an anonymous caller may not.
func checkWebViewAccess(t *testing.T, cs kubernetes.Interface) {
	review := func(user string, groups []string, verb, name string) bool {
		t.Helper()
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: "visibility.koord-queue.x-k8s.io", Resource: "ui", Name: name},
		}}
		got, err := cs.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("SubjectAccessReview: %v", err)
		}
		return got.Status.Allowed
	}
	tenant := []string{"system:authenticated"}
	for _, c := range []struct{ verb, name string }{{"list", ""}, {"get", "app.js"}, {"get", "index.html"}} {
		if !review("some-tenant", tenant, c.verb, c.name) {
			t.Errorf("an authenticated user may not %s ui %q", c.verb, c.name)
		}
		if review("system:anonymous", []string{"system:unauthenticated"}, c.verb, c.name) {
			t.Errorf("an anonymous caller may %s ui %q", c.verb, c.name)
		}
	}
	for _, verb := range []string{"create", "update", "delete"} {
		if review("some-tenant", tenant, verb, "app.js") {
			t.Errorf("an authenticated user may %s ui", verb)
		}
	}
}

func resourceOf(r string) string    { res, _, _ := strings.Cut(r, "/"); return res }
func subresourceOf(r string) string { _, sub, _ := strings.Cut(r, "/"); return sub }

// impersonate returns a rest.Config acting as user (the admin of envtest may
// impersonate), with the groups the API server gives a ServiceAccount.
func impersonate(cfg *rest.Config, user string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user}
	return c
}

// checkImpersonatedCalls makes real requests as each ServiceAccount.
func checkImpersonatedCalls(t *testing.T, env *framework.Env) {
	ctx := t.Context()
	clients := map[string]client.Client{}
	sets := map[string]kubernetes.Interface{}
	for _, sa := range []string{schedulerSA, controllersSA} {
		cfg := impersonate(env.Config, sa)
		c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
		if err != nil {
			t.Fatal(err)
		}
		clients[sa] = c
		if sets[sa], err = kubernetes.NewForConfig(cfg); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(what string, err error, forbidden bool) {
		t.Helper()
		switch {
		case forbidden && !apierrors.IsForbidden(err):
			t.Errorf("%s: want Forbidden, got %v", what, err)
		case !forbidden && err != nil:
			t.Errorf("%s: %v", what, err)
		}
	}

	// The scheduler creates the Queue of a quota and writes its status.
	q := &schedv1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "rbac-probe", Namespace: Namespace}}
	expect("koord-queue creates a Queue", clients[schedulerSA].Create(ctx, q), false)
	expect("koord-queue lists QueueUnits", clients[schedulerSA].List(ctx, &schedv1alpha1.QueueUnitList{}), false)
	expect("koord-queue lists ElasticQuotas", clients[schedulerSA].List(ctx, &eqv1alpha1.ElasticQuotaList{}), false)
	_, err := sets[schedulerSA].CoreV1().Secrets(Namespace).List(ctx, metav1.ListOptions{})
	expect("koord-queue lists secrets", err, true)
	err = sets[schedulerSA].CoreV1().Pods("default").Delete(ctx, "any", metav1.DeleteOptions{})
	expect("koord-queue deletes a pod", err, true)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "rbac-probe", Namespace: "default"}}
	expect("koord-queue updates a Job", clients[schedulerSA].Patch(ctx, job, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"suspend":false}}`))), true)

	// The controllers own QueueUnits and nothing of Queues.
	unit := &schedv1alpha1.QueueUnit{
		ObjectMeta: metav1.ObjectMeta{Name: "rbac-probe", Namespace: "default"},
		Spec: schedv1alpha1.QueueUnitSpec{
			Queue:       "rbac-probe",
			ConsumerRef: &corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Name: "rbac-probe", Namespace: "default"},
		},
	}
	expect("koord-queue-controllers creates a QueueUnit", clients[controllersSA].Create(ctx, unit), false)
	expect("koord-queue-controllers deletes a QueueUnit", clients[controllersSA].Delete(ctx, unit), false)
	expect("koord-queue-controllers deletes a Queue", clients[controllersSA].Delete(ctx, q), true)
	_, err = sets[controllersSA].CoreV1().Secrets("default").Get(ctx, "any", metav1.GetOptions{})
	expect("koord-queue-controllers reads a secret", err, true)
	_, err = sets[controllersSA].BatchV1().Jobs("default").List(ctx, metav1.ListOptions{})
	expect("koord-queue-controllers lists Jobs", err, false)

	// A TrainJob's pods are its runtime's: the controllers read training
	// runtimes, and write none.
	runtimes := &unstructured.UnstructuredList{}
	runtimes.SetGroupVersionKind(schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: "ClusterTrainingRuntimeList"})
	expect("koord-queue-controllers lists ClusterTrainingRuntimes", clients[controllersSA].List(ctx, runtimes), false)
	runtimes.SetGroupVersionKind(schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: "TrainingRuntimeList"})
	expect("koord-queue-controllers lists TrainingRuntimes", clients[controllersSA].List(ctx, runtimes, client.InNamespace("default")), false)
	rt := &unstructured.Unstructured{}
	rt.SetGroupVersionKind(schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: "ClusterTrainingRuntime"})
	rt.SetName("rbac-probe")
	expect("koord-queue-controllers creates a ClusterTrainingRuntime", clients[controllersSA].Create(ctx, rt), true)

	// Extension pod: the controllers remove their gate from a pod and delete
	// an evicted one; they never make pods.
	gated := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "rbac-probe-pod", Namespace: "default"},
		Spec: corev1.PodSpec{
			Containers:      []corev1.Container{{Name: "c", Image: "probe"}},
			SchedulingGates: []corev1.PodSchedulingGate{{Name: "koord-queue/admission"}},
		},
	}
	expect("koord-queue-controllers creates a pod", clients[controllersSA].Create(ctx, gated.DeepCopy()), true)
	expect("admin creates a gated pod", env.Client.Create(ctx, gated), false)
	expect("koord-queue-controllers removes the pod's scheduling gate",
		clients[controllersSA].Patch(ctx, gated, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"schedulingGates":null}}`))), false)
	expect("koord-queue-controllers deletes the pod", clients[controllersSA].Delete(ctx, gated), false)

	// Extension leaderworkerset: the controllers read LeaderWorkerSets (their
	// pods are written as above) and never make or delete one.
	lwsList := &unstructured.UnstructuredList{}
	lwsList.SetGroupVersionKind(schema.GroupVersionKind{Group: "leaderworkerset.x-k8s.io", Version: "v1", Kind: "LeaderWorkerSetList"})
	expect("koord-queue-controllers lists LeaderWorkerSets", clients[controllersSA].List(ctx, lwsList), false)
	set := &unstructured.Unstructured{}
	set.SetGroupVersionKind(schema.GroupVersionKind{Group: "leaderworkerset.x-k8s.io", Version: "v1", Kind: "LeaderWorkerSet"})
	set.SetName("rbac-probe")
	set.SetNamespace("default")
	expect("koord-queue-controllers deletes a LeaderWorkerSet", clients[controllersSA].Delete(ctx, set), true)

	expect("admin removes the probe Queue", env.Client.Delete(ctx, q), false)
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func(context.Context) (bool, error)) {
	t.Helper()
	if err := framework.Eventually(t.Context(), timeout, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
