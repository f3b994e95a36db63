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

package visibility

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queue"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/pkg/view"
)

// fakeView is a scheduler with one queue, a quota tree and a cache.
type fakeView struct {
	tree    *quota.Tree
	pending []view.PendingUnit
	// quotaOf maps a cached unit's name to its quota.
	quotaOf map[string]schedtypes.QuotaName
	objects client.Reader
	// follower and unsynced are the replica's state (zero: a synced leader).
	follower bool
	unsynced []string
}

var _ view.Reader = (*fakeView)(nil)

func (f *fakeView) QueueNames() []schedtypes.QueueName { return []schedtypes.QueueName{"q"} }
func (f *fakeView) QueueSettings(schedtypes.QueueName) (queue.Settings, bool) {
	return queue.Settings{}, true
}
func (f *fakeView) Pending(schedtypes.QueueName) ([]view.PendingUnit, bool) { return f.pending, true }
func (f *fakeView) PendingCounts() map[schedtypes.QueueName]int {
	return map[schedtypes.QueueName]int{"q": len(f.pending)}
}
func (f *fakeView) Orphans() map[schedtypes.QueueName][]schedtypes.UnitKey { return nil }
func (f *fakeView) Quotas() []schedtypes.Info                              { return f.tree.List() }
func (f *fakeView) Map(u *schedv1alpha1.QueueUnit) (schedtypes.QueueName, schedtypes.QuotaName) {
	return "q", f.quotaOf[u.Name]
}
func (f *fakeView) Cohort(schedtypes.QuotaName) schedtypes.CohortName { return "" }
func (f *fakeView) Objects() client.Reader                            { return f.objects }
func (f *fakeView) Leading() bool                                     { return !f.follower }
func (f *fakeView) Unsynced() []string                                { return f.unsynced }

func res(cpu, gpu int64) schedtypes.Resources {
	r := schedtypes.Resources{corev1.ResourceCPU: cpu * 1000}
	if gpu > 0 {
		r["nvidia.com/gpu"] = gpu
	}
	return r
}

// newFakeView: parent (min 8 CPU, max 16) over team-a (min 4, max 8 CPU and
// 2 GPUs, using 6 CPU and 1 GPU) and team-b (min 4, lends nothing, using 1).
func newFakeView(t *testing.T) *fakeView {
	t.Helper()
	tree := quota.New(1)
	for _, s := range []quota.Spec{
		{Name: "parent", Min: res(8, 0), Max: res(16, 0)},
		{Name: "team-a", Parent: "parent", Min: res(4, 0), Max: res(8, 2)},
		{Name: "team-b", Parent: "parent", Min: res(4, 0), NoLend: true},
	} {
		if err := tree.Upsert(s); err != nil {
			t.Fatal(err)
		}
	}
	tree.Charge("team-a", res(6, 1))
	tree.Charge("team-b", res(1, 0))
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{schedv1alpha1.AddToScheme, eqv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	objects := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		utiltesting.MakeElasticQuota("parent").Namespace("root-ns").Obj(),
		utiltesting.MakeElasticQuota("team-a").Namespace("ns-a").Obj(),
		utiltesting.MakeElasticQuota("team-b").Namespace("ns-b").Obj(),
		utiltesting.MakeQueueUnit("a1", "ns-a").Phase(schedv1alpha1.QueueUnitPhaseRunning).Obj(),
		utiltesting.MakeQueueUnit("a2", "ns-a").Phase(schedv1alpha1.QueueUnitPhaseReserved).Obj(),
		utiltesting.MakeQueueUnit("b1", "ns-b").Phase(schedv1alpha1.QueueUnitPhaseDequeued).Obj(),
		relabelled(utiltesting.MakeQueueUnit("moved", "ns-b").Phase(schedv1alpha1.QueueUnitPhaseRunning).Obj(), "team-b"),
		utiltesting.MakeQueueUnit("done", "ns-b").Phase(schedv1alpha1.QueueUnitPhaseSucceed).Obj(),
	).Build()
	return &fakeView{
		tree: tree, objects: objects,
		quotaOf: map[string]schedtypes.QuotaName{"a1": "team-a", "a2": "team-a", "b1": "team-b", "done": "team-b", "moved": "team-a"},
		pending: []view.PendingUnit{
			{Namespace: "ns-a", Name: "w1", Quota: "team-a", Position: 1, Request: res(4, 1)},
			{Namespace: "ns-a", Name: "w2", Quota: "team-a", Position: 2, Request: res(2, 0)},
		},
	}
}

// relabelled is a unit admitted to quota, whose labels now name another.
func relabelled(u *schedv1alpha1.QueueUnit, quota string) *schedv1alpha1.QueueUnit {
	u.Status.Quota = quota
	return u
}

func q(s string) resource.Quantity { return resource.MustParse(s) }

func TestQuotasFromScheduler(t *testing.T) {
	got, err := FromScheduler(newFakeView(t)).Quotas(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]visibilityv1alpha1.Quota{}
	for _, g := range got {
		byName[g.Name] = g
	}
	cpu := func(minimum, maxText, used, borrowed, lent, pending string) visibilityv1alpha1.QuotaResource {
		r := visibilityv1alpha1.QuotaResource{Name: corev1.ResourceCPU, Min: q(minimum), Used: q(used), Borrowed: q(borrowed), Lent: q(lent), Pending: q(pending)}
		if maxText != "" {
			r.Max = ptr.To(q(maxText))
		}
		return r
	}
	want := map[string]visibilityv1alpha1.Quota{
		"parent": {
			TypeMeta:   metav1.TypeMeta{Kind: "Quota", APIVersion: gv.String()},
			ObjectMeta: metav1.ObjectMeta{Name: "parent"}, Parent: string(quota.RootName), IsParent: true, QuotaNamespace: "root-ns",
			Resources: []visibilityv1alpha1.QuotaResource{
				cpu("8", "16", "7", "0", "1", "6"),
				{Name: "nvidia.com/gpu", Min: q("0"), Used: q("1"), Borrowed: q("1"), Lent: q("0"), Pending: q("1")},
			},
			PendingUnits: 2, AdmittedUnits: 4,
		},
		"team-a": {
			TypeMeta:   metav1.TypeMeta{Kind: "Quota", APIVersion: gv.String()},
			ObjectMeta: metav1.ObjectMeta{Name: "team-a"}, Parent: "parent", QuotaNamespace: "ns-a",
			Resources: []visibilityv1alpha1.QuotaResource{
				cpu("4", "8", "6", "2", "0", "6"),
				{Name: "nvidia.com/gpu", Min: q("0"), Max: ptr.To(q("2")), Used: q("1"), Borrowed: q("1"), Lent: q("0"), Pending: q("1")},
			},
			PendingUnits: 2, AdmittedUnits: 2,
		},
		"team-b": {
			TypeMeta:   metav1.TypeMeta{Kind: "Quota", APIVersion: gv.String()},
			ObjectMeta: metav1.ObjectMeta{Name: "team-b"}, Parent: "parent", QuotaNamespace: "ns-b",
			Resources:     []visibilityv1alpha1.QuotaResource{cpu("4", "", "1", "0", "0", "0")},
			AdmittedUnits: 2, // b1, and moved where it was admitted
		},
	}
	if diff := cmp.Diff(want, byName); diff != "" {
		t.Errorf("quotas (-want +got):\n%s", diff)
	}
}

func TestQuotasEndpoints(t *testing.T) {
	h := newHandler(t, FromScheduler(newFakeView(t)))
	var list visibilityv1alpha1.QuotaList
	if code := get(t, h, base+"/quotas", &list); code != http.StatusOK {
		t.Fatalf("list: %d", code)
	}
	var names []string
	for _, it := range list.Items {
		names = append(names, it.Name)
	}
	if diff := cmp.Diff([]string{"parent", "team-a", "team-b"}, names); diff != "" || list.Kind != "QuotaList" {
		t.Errorf("list kind %q, names (-want +got):\n%s", list.Kind, diff)
	}
	var one visibilityv1alpha1.Quota
	if code := get(t, h, base+"/quotas/team-a", &one); code != http.StatusOK || one.Name != "team-a" || one.Kind != "Quota" {
		t.Errorf("get team-a: %d %+v", code, one)
	}
	var st metav1.Status
	if code := get(t, h, base+"/quotas/nope", &st); code != http.StatusNotFound || st.Reason != metav1.StatusReasonNotFound {
		t.Errorf("get nope: %d %+v", code, st)
	}
}

func TestQuotaTable(t *testing.T) {
	h := newHandler(t, FromScheduler(newFakeView(t)))
	table := func(path string) metav1.Table {
		t.Helper()
		var tb metav1.Table
		rec := request(t, h, path, tableAccept)
		if err := json.Unmarshal(rec.Body.Bytes(), &tb); err != nil {
			t.Fatal(err)
		}
		return tb
	}
	tb := table(base + "/quotas")
	var cols []string
	for _, c := range tb.ColumnDefinitions {
		if c.Priority == 0 {
			cols = append(cols, c.Name)
		}
	}
	if diff := cmp.Diff([]string{"Name", "Parent", "Pending", "Admitted", "CPU", "GPU"}, cols); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	var rows [][]any
	for _, r := range tb.Rows {
		rows = append(rows, r.Cells)
	}
	want := [][]any{
		{"parent", string(quota.RootName), "root-ns", float64(2), float64(4), "7/8/16", "1/0/-", "-", "nvidia.com/gpu 1", "cpu 1"},
		{"team-a", "parent", "ns-a", float64(2), float64(2), "6/4/8", "1/0/2", "-", "cpu 2, nvidia.com/gpu 1", "-"},
		{"team-b", "parent", "ns-b", float64(0), float64(2), "1/4/-", "-", "-", "-", "-"},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if one := table(base + "/quotas/team-b"); len(one.Rows) != 1 || one.Rows[0].Cells[0] != "team-b" {
		t.Errorf("table of team-b: %+v", one.Rows)
	}
}

// Without quotas (no quota plugin) the cache is not asked for ElasticQuotas,
// whose informer would not exist.
func TestNoQuotas(t *testing.T) {
	got, err := FromScheduler(&fakeView{tree: quota.New(1)}).Quotas(context.Background())
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("got %v, %v; want an empty list", got, err)
	}
}
