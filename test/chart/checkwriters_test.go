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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// The admission-check writers the test lists in the chart's value.
const (
	provisionerSA = "system:serviceaccount:checks:provisioner"
	impostorSA    = "system:serviceaccount:checks:impostor"
	writersGroup  = "example.com:check-controllers"
)

var queueUnitsGVR = schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "queueunits"}

// TestAdmissionCheckWriters installs the chart with an admission-check
// controller's ServiceAccount and a group listed in
// queueUnitStatusPolicy.admissionCheckWriters, and plays that controller
// answering a reserved unit's checks on a real kube-apiserver: by merge patch
// and by server-side apply it may set a check's state, but not any other
// status field, nor add or remove checks. A ServiceAccount given the same
// RBAC but not listed is refused by the policy; koord-queue's own
// ServiceAccounts still write every field.
func TestAdmissionCheckWriters(t *testing.T) {
	env := startControlPlane(t)
	r := render(t,
		"queueUnitStatusPolicy.admissionCheckWriters.serviceAccounts={checks/provisioner}",
		"queueUnitStatusPolicy.admissionCheckWriters.groups={"+writersGroup+"}")
	applyChart(t, env, r)
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	// A unit reserved with two checks pending, as the scheduler leaves it.
	unit := &schedv1alpha1.QueueUnit{
		ObjectMeta: metav1.ObjectMeta{Name: "checked", Namespace: "default"},
		Spec: schedv1alpha1.QueueUnitSpec{
			Queue:       "checked-queue",
			ConsumerRef: &corev1.ObjectReference{APIVersion: "example.com/v1", Kind: "Example", Name: "checked", Namespace: "default"},
		},
	}
	must(env.Client.Create(ctx, unit))
	must(env.Client.Status().Patch(ctx, unit, mergePatch(`{"status":{"phase":"Reserved","message":"waiting for admission checks prov-req-check, capacity-check",
		"admissionChecks":[{"name":"prov-req-check","state":"Pending"},{"name":"capacity-check","state":"Pending"}]}}`)))

	// The impostor holds the writers' RBAC without being listed, so only the
	// policy can refuse it.
	must(env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "impostor-check-writer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "koord-queue-admission-check-writer"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "impostor", Namespace: "checks"}},
	}))
	provisioner := newClient(t, impersonate(env.Config, provisionerSA))
	member := newClient(t, impersonateGroup(env.Config, "carol", writersGroup))
	impostor := newClient(t, impersonate(env.Config, impostorSA))

	ready := mergePatch(`{"status":{"admissionChecks":[{"name":"prov-req-check","state":"Ready","lastTransitionTime":"2026-01-02T03:04:05Z","message":"provisioned"},{"name":"capacity-check","state":"Pending"}]}}`)
	// RBAC and policies reach the authorizer and admission through
	// informers: wait, by dry runs, until both the listed writer's answer
	// passes and the impostor's meets the policy. Where the policy has no
	// exception the wait ends at its deadline and the checks below fail.
	_ = framework.Eventually(ctx, 20*time.Second, func(ctx context.Context) (bool, error) {
		okErr := provisioner.Status().Patch(ctx, unit.DeepCopy(), ready, client.DryRunAll)
		badErr := impostor.Status().Patch(ctx, unit.DeepCopy(), ready, client.DryRunAll)
		return okErr == nil && badErr != nil && strings.Contains(badErr.Error(), policyMessage), nil
	})

	refused := func(what string, err error, want string) {
		t.Helper()
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want Forbidden saying %q", what, err, want)
		}
	}
	checks := func(want ...schedv1alpha1.AdmissionCheckStateType) {
		t.Helper()
		got := &schedv1alpha1.QueueUnit{}
		must(env.Client.Get(ctx, client.ObjectKeyFromObject(unit), got))
		var states []schedv1alpha1.AdmissionCheckStateType
		for _, c := range got.Status.AdmissionChecks {
			states = append(states, c.State)
		}
		if strings.Join(toStrings(states), ",") != strings.Join(toStrings(want), ",") || got.Status.Phase != schedv1alpha1.QueueUnitPhaseReserved {
			t.Errorf("unit: phase %q, check states %v, want Reserved with %v", got.Status.Phase, states, want)
		}
	}

	// The listed ServiceAccount answers by merge patch.
	if err := provisioner.Status().Patch(ctx, unit.DeepCopy(), ready); err != nil {
		t.Errorf("the listed check controller cannot set status.admissionChecks[0].state=Ready by merge patch: %v", err)
	}
	checks(schedv1alpha1.CheckStateReady, schedv1alpha1.CheckStatePending)

	// ... and by server-side apply of the other check alone.
	dyn, err := dynamic.NewForConfig(impersonate(env.Config, provisionerSA))
	must(err)
	apply := func(status map[string]any) error {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "QueueUnit",
			"metadata": map[string]any{"name": unit.Name, "namespace": unit.Namespace},
			"status":   status,
		}}
		_, err := dyn.Resource(queueUnitsGVR).Namespace(unit.Namespace).ApplyStatus(ctx, unit.Name, u, metav1.ApplyOptions{FieldManager: "example-provisioner", Force: true})
		return err
	}
	capacityReady := map[string]any{"name": "capacity-check", "state": "Ready", "lastTransitionTime": "2026-01-02T03:04:06Z"}
	if err := apply(map[string]any{"admissionChecks": []any{capacityReady}}); err != nil {
		t.Errorf("the listed check controller cannot server-side apply status.admissionChecks[capacity-check].state=Ready: %v", err)
	}
	checks(schedv1alpha1.CheckStateReady, schedv1alpha1.CheckStateReady)

	// A member of the listed group answers too.
	retry := mergePatch(`{"status":{"admissionChecks":[{"name":"prov-req-check","state":"Retry"},{"name":"capacity-check","state":"Ready"}]}}`)
	if err := member.Status().Patch(ctx, unit.DeepCopy(), retry); err != nil {
		t.Errorf("a member of the listed group cannot write status.admissionChecks: %v", err)
	}
	checks(schedv1alpha1.CheckStateRetry, schedv1alpha1.CheckStateReady)

	// Anything beyond the checks' answers is refused, naming what is wrong.
	refused("the listed controller also sets status.phase=Dequeued",
		provisioner.Status().Patch(ctx, unit.DeepCopy(), mergePatch(`{"status":{"phase":"Dequeued","admissionChecks":[{"name":"prov-req-check","state":"Ready"},{"name":"capacity-check","state":"Ready"}]}}`)),
		"may change only status.admissionChecks of a QueueUnit; this request also changes status.phase")
	refused("the listed controller rewrites status.message",
		provisioner.Status().Patch(ctx, unit.DeepCopy(), mergePatch(`{"status":{"message":"all good"}}`)),
		"this request also changes status.message")
	refused("the listed controller applies status.phase with a check",
		apply(map[string]any{"phase": "Dequeued", "admissionChecks": []any{capacityReady}}),
		"this request also changes status.phase")
	refused("the listed controller drops a check",
		provisioner.Status().Patch(ctx, unit.DeepCopy(), mergePatch(`{"status":{"admissionChecks":[{"name":"capacity-check","state":"Ready"}]}}`)),
		"not add, remove, rename or reorder checks")
	refused("a group member sets status.phase",
		member.Status().Patch(ctx, unit.DeepCopy(), mergePatch(`{"status":{"phase":"Dequeued"}}`)),
		"this request also changes status.phase")
	checks(schedv1alpha1.CheckStateRetry, schedv1alpha1.CheckStateReady)

	// An unlisted ServiceAccount with the same RBAC is refused either way.
	refused("an unlisted ServiceAccount answers a check", impostor.Status().Patch(ctx, unit.DeepCopy(), ready), policyMessage)
	refused("an unlisted ServiceAccount sets status.phase", impostor.Status().Patch(ctx, unit.DeepCopy(), dequeue), policyMessage)
	checks(schedv1alpha1.CheckStateRetry, schedv1alpha1.CheckStateReady)

	// koord-queue's ServiceAccounts keep writing any status field.
	for _, w := range []struct{ sa, patch string }{
		{schedulerSA, `{"status":{"admissionChecks":[{"name":"prov-req-check","state":"Pending"},{"name":"capacity-check","state":"Pending"}],"message":"requeued"}}`},
		{controllersSA, `{"status":{"phase":"Reserved","podState":{"running":0,"pending":0}}}`},
		{schedulerSA, `{"status":{"phase":"Dequeued","admissionChecks":null}}`},
	} {
		if err := newClient(t, impersonate(env.Config, w.sa)).Status().Patch(ctx, unit.DeepCopy(), mergePatch(w.patch)); err != nil {
			t.Errorf("%s cannot write QueueUnit status %s: %v", w.sa, w.patch, err)
		}
	}
	got := &schedv1alpha1.QueueUnit{}
	must(env.Client.Get(ctx, client.ObjectKeyFromObject(unit), got))
	if got.Status.Phase != schedv1alpha1.QueueUnitPhaseDequeued || len(got.Status.AdmissionChecks) != 0 {
		t.Errorf("after koord-queue's writes: phase %q, checks %v", got.Status.Phase, got.Status.AdmissionChecks)
	}
}

func mergePatch(s string) client.Patch {
	return client.RawPatch("application/merge-patch+json", []byte(s))
}

func newClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// impersonateGroup acts as user, a member of group.
func impersonateGroup(cfg *rest.Config, user, group string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{group, "system:authenticated"}}
	return c
}

func toStrings(states []schedv1alpha1.AdmissionCheckStateType) []string {
	out := make([]string, len(states))
	for i, s := range states {
		out[i] = string(s)
	}
	return out
}
