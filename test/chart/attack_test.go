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
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// policyMessage is what the chart's ValidatingAdmissionPolicy answers.
const policyMessage = "QueueUnit status is written only by koord-queue's ServiceAccounts"

// dequeue is the attack on a unit: mark it admitted, so its job resumes.
var dequeue = client.RawPatch("application/merge-patch+json", []byte(`{"status":{"phase":"Dequeued"}}`))

// checkStatusWriters plays tenants writing status.phase=Dequeued on a
// QueueUnit of their namespace: a tenant given the chart's edit role, and a
// tenant whose namespace admin granted queueunits/status by RBAC. Both are
// refused; koord-queue's two ServiceAccounts and system:masters are not.
func checkStatusWriters(t *testing.T, env *framework.Env) {
	ctx := t.Context()
	const ns = "default"
	unit := &schedv1alpha1.QueueUnit{
		ObjectMeta: metav1.ObjectMeta{Name: "attack", Namespace: ns},
		Spec: schedv1alpha1.QueueUnitSpec{
			Queue:       "team-a",
			ConsumerRef: &corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Name: "attack", Namespace: ns},
		},
	}
	if err := env.Client.Create(ctx, unit); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), unit) })

	// alice edits in the namespace through the chart's tenant role; mallory
	// also holds a Role that RBAC-grants the status subresource.
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(env.Client.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "tenants-edit", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "koord-queue-edit"},
		Subjects: []rbacv1.Subject{
			{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "alice"},
			{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "mallory"},
		},
	}))
	must(env.Client.Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "queueunit-status-writer", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{schedv1alpha1.GroupVersion.Group}, Resources: []string{"queueunits/status"}, Verbs: []string{"update", "patch"}}},
	}))
	must(env.Client.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "mallory-status", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "queueunit-status-writer"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "mallory"}},
	}))
	as := func(user string) client.Client {
		c, err := client.New(impersonate(env.Config, user), client.Options{Scheme: scheme.New()})
		must(err)
		return c
	}
	alice, mallory := as("alice"), as("mallory")

	// The API server loads RBAC and admission policies from its own
	// informers: wait, by dry runs that change nothing, until mallory's
	// status write meets the policy. Where nothing refuses it the wait ends
	// at its deadline and the attack below succeeds, failing the test.
	_ = framework.Eventually(ctx, 20*time.Second, func(ctx context.Context) (bool, error) {
		err := mallory.Status().Patch(ctx, unit.DeepCopy(), dequeue, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), policyMessage), nil
	})
	err := mallory.Status().Patch(ctx, unit.DeepCopy(), dequeue)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), policyMessage) {
		t.Errorf("a tenant granted queueunits/status by RBAC wrote status.phase=Dequeued (want the policy's refusal): %v", err)
	}

	// alice's role, once it applies, lets her change the unit but not its status.
	_ = framework.Eventually(ctx, 20*time.Second, func(ctx context.Context) (bool, error) {
		return alice.Patch(ctx, unit.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"probe":"x"}}}`)), client.DryRunAll) == nil, nil
	})
	if err := alice.Status().Patch(ctx, unit.DeepCopy(), dequeue); !apierrors.IsForbidden(err) {
		t.Errorf("a tenant with the edit role wrote status.phase=Dequeued: %v", err)
	}
	if err := alice.List(ctx, &schedv1alpha1.QueueUnitList{}, client.InNamespace(ns)); err != nil {
		t.Errorf("a tenant with the edit role cannot list QueueUnits: %v", err)
	}
	if err := alice.Patch(ctx, unit.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"team":"a"}}}`))); err != nil {
		t.Errorf("a tenant with the edit role cannot change a QueueUnit: %v", err)
	}
	got := &schedv1alpha1.QueueUnit{}
	must(env.Client.Get(ctx, client.ObjectKeyFromObject(unit), got))
	if got.Status.Phase == schedv1alpha1.QueueUnitPhaseDequeued {
		t.Errorf("the tenants' writes left the unit %s", got.Status.Phase)
	}

	// koord-queue's ServiceAccounts and the break-glass group still write it.
	for _, w := range []struct {
		who   string
		c     client.Client
		phase schedv1alpha1.QueueUnitPhase
	}{{schedulerSA, as(schedulerSA), schedv1alpha1.QueueUnitPhaseReserved}, {controllersSA, as(controllersSA), schedv1alpha1.QueueUnitPhaseRunning}, {"system:masters", env.Client, schedv1alpha1.QueueUnitPhaseEnqueued}} {
		patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"status":{"phase":%q}}`, w.phase))
		if err := w.c.Status().Patch(ctx, unit.DeepCopy(), patch); err != nil {
			t.Errorf("%s cannot write QueueUnit status: %v", w.who, err)
		}
	}
}

// checkMetricsAccess scrapes the binaries' metrics servers as Prometheus
// would and as an attacker would: without a token (401), with a token of a
// ServiceAccount not bound to koord-queue-metrics-reader (403), and with one
// that is (200). The probes' paths answer without a token.
func checkMetricsAccess(t *testing.T, env *framework.Env, addrs map[string]string, open map[string][]string) {
	ctx := t.Context()
	cs := env.Clientset
	for _, name := range []string{"metrics-scraper-probe", "metrics-intruder"} {
		if _, err := cs.CoreV1().ServiceAccounts(Namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-scraper-probe"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "koord-queue-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "metrics-scraper-probe", Namespace: Namespace}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	reader, intruder := saToken(t, cs, Namespace, "metrics-scraper-probe"), saToken(t, cs, Namespace, "metrics-intruder")
	// The binaries sign their own certificate; the scraper skips verifying it, as the chart's monitors do.
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed on purpose
	get := func(url, token string) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, "", err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	for bin, addr := range addrs {
		url := "https://" + addr + "/metrics"
		if code, _, err := get(url, ""); err != nil || code != http.StatusUnauthorized {
			t.Errorf("%s: GET %s without a token: %d %v, want 401 over HTTPS", bin, url, code, err)
		}
		if code, _, err := get(url, intruder); err != nil || code != http.StatusForbidden {
			t.Errorf("%s: GET %s as a ServiceAccount without the reader role: %d %v, want 403", bin, url, code, err)
		}
		// RBAC reaches the API server's authorizer through an informer.
		waitFor(t, bin+" to serve /metrics to the reader role", time.Minute, func(context.Context) (bool, error) {
			code, body, err := get(url, reader)
			return err == nil && code == http.StatusOK && strings.Contains(body, "# TYPE "), nil
		})
		for _, path := range open[bin] {
			if code, _, err := get("https://"+addr+path, ""); err != nil || code != http.StatusOK {
				t.Errorf("%s: probe GET %s without a token: %d %v, want 200", bin, path, code, err)
			}
		}
	}
}

// saToken issues a short-lived token of ServiceAccount ns/name.
func saToken(t *testing.T, cs kubernetes.Interface, ns, name string) string {
	t.Helper()
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s/%s: %v", ns, name, err)
	}
	return tr.Status.Token
}
