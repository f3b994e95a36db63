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

package badinput

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
)

// rbacBinding gives user alice the chart's koord-queue-edit role in the
// tenant namespace, as a namespace admin would with the built-in edit role.
var rbacBinding = rbacv1.RoleBinding{
	ObjectMeta: metav1.ObjectMeta{Name: "alice-edit", Namespace: tenant},
	RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "koord-queue-edit"},
	Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "alice"}},
}

// refusal is a case the API server refuses: write is done by the admin
// unless it says otherwise, and the error must name field.
type refusal struct {
	name  string
	field string
	write func(ctx context.Context, c client.Client) error
}

func unstructuredQuota(name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": eqv1alpha1.SchemeGroupVersion.String(), "kind": "ElasticQuota",
		"metadata": map[string]any{"name": name, "namespace": tenant},
		"spec":     spec,
	}}
	return u
}

func quotaList(pairs ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		l[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return l
}

func eqWith(name string, min, max corev1.ResourceList) *eqv1alpha1.ElasticQuota {
	return &eqv1alpha1.ElasticQuota{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tenant}, Spec: eqv1alpha1.ElasticQuotaSpec{Min: min, Max: max}}
}

// unit is a QueueUnit written by hand, for a kind no extension manages (so
// koord-queue-controllers leaves it alone), in the good quota's queue.
func unit(name string, mutate func(*schedv1alpha1.QueueUnit)) *schedv1alpha1.QueueUnit {
	u := &schedv1alpha1.QueueUnit{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tenant},
		Spec: schedv1alpha1.QueueUnitSpec{
			ConsumerRef: &corev1.ObjectReference{APIVersion: "example.com/v1", Kind: "Widget", Name: name, Namespace: tenant},
			Queue:       goodQuota,
			PodSet:      []schedv1alpha1.PodSet{{Name: "main", Count: 1}},
		},
	}
	mutate(u)
	return u
}

func create1(o client.Object) func(context.Context, client.Client) error {
	return func(ctx context.Context, c client.Client) error { return c.Create(ctx, o) }
}

// refusals are the cases the API server refuses, naming the field.
var refusals = []refusal{
	// ElasticQuota, by the policy of config/policy/elasticquota.yaml.
	{"quota min above max", "spec.min", create1(eqWith("min-above-max", quotaList("cpu", "8"), quotaList("cpu", "4")))},
	{"quota min above max in memory only", "spec.min", create1(eqWith("min-above-max-mem", quotaList("cpu", "1", "memory", "16Gi"), quotaList("cpu", "4", "memory", "8Gi")))},
	{"quota negative max", "spec.max", create1(eqWith("negative-max", nil, quotaList("cpu", "-1")))},
	{"quota negative min", "spec.min", create1(eqWith("negative-min", quotaList("memory", "-1Gi"), quotaList("memory", "8Gi")))},
	{"quota unknown resource cpus", "spec.max", create1(eqWith("cpus", nil, quotaList("cpus", "4")))},
	{"quota unknown resource gpu in min", "spec.min", create1(eqWith("gpu", quotaList("gpu", "1"), quotaList("nvidia.com/gpu", "1")))},
	{"quota min raised above max by an update", "spec.min", func(ctx context.Context, c client.Client) error {
		eq := eqWith("raised", quotaList("cpu", "1"), quotaList("cpu", "2"))
		if err := c.Create(ctx, eq); err != nil {
			return err
		}
		eq.Spec.Min = quotaList("cpu", "3")
		return c.Update(ctx, eq)
	}},
	{"quota amount that is not a quantity", "spec.max.cpu", create1(unstructuredQuota("four", map[string]any{"max": map[string]any{"cpu": "four"}}))},
	{"quota amount as a fractional JSON number", "spec.max.cpu", create1(unstructuredQuota("float", map[string]any{"max": map[string]any{"cpu": 0.5}}))},

	// Jobs, by the API server's own validation.
	{"job quota label that is not a label value", "metadata.labels", create1(job(tenant, "bad-label", "team a!", "1"))},
	{"job quota label of 64 characters", "metadata.labels", create1(job(tenant, "long-label", strings.Repeat("q", 64), "1"))},
	{"job asking for cpus", "spec.template.spec.containers[0].resources.requests[cpus]", func(ctx context.Context, c client.Client) error {
		j := job(tenant, "cpus", goodQuota, "")
		j.Spec.Template.Spec.Containers[0].Resources.Requests = quotaList("cpus", "1")
		return c.Create(ctx, j)
	}},
	{"job with negative parallelism", "spec.parallelism", func(ctx context.Context, c client.Client) error {
		j := job(tenant, "negative-parallelism", goodQuota, "1")
		j.Spec.Parallelism = ptr.To[int32](-1)
		return c.Create(ctx, j)
	}},
	{"job with a negative cpu request", "spec.template.spec.containers[0].resources.requests[cpu]", create1(job(tenant, "negative-cpu", goodQuota, "-1"))},
	{"job of 4 MiB", "too large", func(ctx context.Context, c client.Client) error {
		j := job(tenant, "four-mib", goodQuota, "1")
		j.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "BIG", Value: strings.Repeat("x", 4<<20)}}
		return c.Create(ctx, j)
	}},

	// QueueUnits written by hand, by the CRD's schema.
	{"unit with a negative pod count", "spec.podSet[0].count", create1(unit("negative-count", func(u *schedv1alpha1.QueueUnit) { u.Spec.PodSet[0].Count = -1 }))},
	{"unit with nine pod sets", "spec.podSet", create1(unit("nine-sets", func(u *schedv1alpha1.QueueUnit) {
		u.Spec.PodSet = nil
		for _, n := range "abcdefghi" {
			u.Spec.PodSet = append(u.Spec.PodSet, schedv1alpha1.PodSet{Name: string(n), Count: 1})
		}
	}))},
	{"unit with two pod sets of one name", "spec.podSet[1]", create1(unit("dup-sets", func(u *schedv1alpha1.QueueUnit) {
		u.Spec.PodSet = append(u.Spec.PodSet, schedv1alpha1.PodSet{Name: "main", Count: 2})
	}))},
	{"unit with minCount above count", "podSet[].minCount", create1(unit("mincount", func(u *schedv1alpha1.QueueUnit) { u.Spec.PodSet[0].MinCount = ptr.To[int32](3) }))},
	{"unit with a negative resource", "spec.resource", create1(unit("negative-resource", func(u *schedv1alpha1.QueueUnit) {
		u.Spec.Resource = quotaList("cpu", "-2")
	}))},
	{"unit without consumerRef", "spec.consumerRef", create1(unit("no-consumer", func(u *schedv1alpha1.QueueUnit) { u.Spec.ConsumerRef = nil }))},
	{"unit whose consumerRef has no kind", "spec.consumerRef", create1(unit("no-kind", func(u *schedv1alpha1.QueueUnit) { u.Spec.ConsumerRef.Kind = "" }))},
	{"unit with a zero execution budget", "spec.maximumExecutionTimeSeconds", create1(unit("zero-budget", func(u *schedv1alpha1.QueueUnit) {
		u.Spec.MaximumExecutionTimeSeconds = ptr.To[int32](0)
	}))},
	{"unit with 1 MiB of annotations", "metadata.annotations", create1(unit("mib", func(u *schedv1alpha1.QueueUnit) {
		u.Annotations = map[string]string{"note": strings.Repeat("x", 1<<20)}
	}))},
	{"queue with an unknown policy", "spec.queuePolicy", create1(&schedv1alpha1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: "fifo", Namespace: tenant},
		Spec:       schedv1alpha1.QueueSpec{QueuePolicy: "Fifo"},
	})},

	// A tenant bound to the chart's edit role.
	{"tenant writes status.phase Dequeued on its own unit", "queueunits/status", func(ctx context.Context, _ client.Client) error {
		u, err := waitingUnit(ctx, "tenant-own")
		if err != nil {
			return err
		}
		alice := asAlice(ctx)
		return alice.Status().Patch(ctx, u, client.RawPatch("application/merge-patch+json", []byte(`{"status":{"phase":"Dequeued"}}`)))
	}},
	{"tenant with RBAC on queueunits/status writes status.phase Dequeued", "QueueUnit status is written only by koord-queue's ServiceAccounts", func(ctx context.Context, _ client.Client) error {
		if err := shared.c.Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "status-writer", Namespace: tenant},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{schedv1alpha1.GroupName}, Resources: []string{"queueunits/status"}, Verbs: []string{"patch", "update"}}},
		}); err != nil {
			return err
		}
		if err := shared.c.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "mallory-status", Namespace: tenant},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "status-writer"},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "mallory"}},
		}); err != nil {
			return err
		}
		u, err := waitingUnit(ctx, "tenant-rbac")
		if err != nil {
			return err
		}
		mallory := impersonate("mallory")
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"status":{"phase":"Dequeued"}}`))
		// RBAC is loaded by an informer: wait until mallory's right applies,
		// so the refusal below is the policy's and not RBAC's.
		_ = waitFor(ctx, func(ctx context.Context) bool {
			err := mallory.Status().Patch(ctx, u.DeepCopy(), patch, client.DryRunAll)
			return err != nil && strings.Contains(err.Error(), "QueueUnit status is written only")
		})
		return mallory.Status().Patch(ctx, u, patch)
	}},
	{"tenant raises its own quota", "elasticquotas", func(ctx context.Context, _ client.Client) error {
		return asAlice(ctx).Create(ctx, quota(tenant, "mine", "", "100", "1000"))
	}},
	{"tenant changes a Queue", "queues", func(ctx context.Context, _ client.Client) error {
		return asAlice(ctx).Create(ctx, &schedv1alpha1.Queue{
			ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: tenant},
			Spec:       schedv1alpha1.QueueSpec{QueuePolicy: schedv1alpha1.QueuePolicyPriority},
		})
	}},
}

// TestRefused runs every refusal and checks that nothing it touched
// blocks the next good unit.
func TestRefused(t *testing.T) {
	h := setup(t)
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			refused(t, tc.write(context.Background(), h.c), tc.field)
		})
	}
	h.probe(t)
}

// TestStatusWriteLeavesUnitAlone checks that the tenants' refused writes left
// their units undecided.
func TestStatusWriteLeavesUnitAlone(t *testing.T) {
	setup(t)
	ctx := context.Background()
	u, err := waitingUnit(ctx, "tenant-alone")
	if err != nil {
		t.Fatal(err)
	}
	alice := asAlice(ctx)
	if err := alice.Status().Patch(ctx, u.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(`{"status":{"phase":"Dequeued"}}`))); err == nil {
		t.Fatal("alice wrote the status")
	}
	// alice may still change the unit's spec (the edit role).
	if err := alice.Patch(ctx, u.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"team":"a"}}}`))); err != nil {
		t.Errorf("alice cannot change her unit: %v", err)
	}
	got := &schedv1alpha1.QueueUnit{}
	if err := shared.c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued {
		t.Errorf("the unit is %s after the tenant's refused write, want Enqueued", got.Status.Phase)
	}
	j := &batchv1.Job{}
	if err := shared.c.Get(ctx, client.ObjectKey{Namespace: tenant, Name: "tenant-alone"}, j); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(j.Spec.Suspend, false) {
		t.Error("the tenant's job was resumed")
	}
}

// waitingUnit creates a job that can never fit its quota ("held", 1 CPU)
// and returns its unit once the unit waits: the tenant's own unit.
func waitingUnit(ctx context.Context, name string) (*schedv1alpha1.QueueUnit, error) {
	if err := shared.c.Create(ctx, quota(tenant, "held", "", "", "1")); client.IgnoreAlreadyExists(err) != nil {
		return nil, err
	}
	if err := shared.c.Create(ctx, job(tenant, name, "held", "2")); err != nil {
		return nil, err
	}
	var found *schedv1alpha1.QueueUnit
	err := waitFor(ctx, func(ctx context.Context) bool {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tenant}}
		if u := findUnit(j); u != nil && u.Status.Phase == schedv1alpha1.QueueUnitPhaseEnqueued {
			found = u
			return true
		}
		return false
	})
	return found, err
}

func impersonate(user string) client.Client {
	c, err := client.New(impersonatedConfig(user), client.Options{Scheme: shared.c.Scheme()})
	if err != nil {
		panic(err)
	}
	return c
}

// asAlice is alice once her edit binding applies (RBAC is loaded by an
// informer).
func asAlice(ctx context.Context) client.Client {
	alice := impersonate("alice")
	_ = waitFor(ctx, func(ctx context.Context) bool {
		return alice.List(ctx, &schedv1alpha1.QueueUnitList{}, client.InNamespace(tenant)) == nil
	})
	return alice
}
