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
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/features"
)

// tableAccept is what kubectl get sends for human-readable output.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

func request(t *testing.T, h http.Handler, path, accept string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestTableOutput(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	src := newFakeSource()
	scope := Scope{Resource: visibilityv1alpha1.ResourceQueues, Name: "team-a"}
	for i := range src.units[scope][visibilityv1alpha1.PhaseEnqueued] {
		src.units[scope][visibilityv1alpha1.PhaseEnqueued][i].CreationTimestamp = metav1.NewTime(created)
	}
	now := created.Add(90 * time.Minute)
	h := newHandler(t, src, WithClock(func() time.Time { return now }))

	rec := request(t, h, base+"/queues/team-a/queueunits?limit=2", tableAccept)
	var table metav1.Table
	if err := json.Unmarshal(rec.Body.Bytes(), &table); err != nil || rec.Code != 200 {
		t.Fatalf("%d %s: %v", rec.Code, rec.Body.String(), err)
	}
	if table.Kind != "Table" || table.APIVersion != "meta.k8s.io/v1" {
		t.Errorf("kind %q apiVersion %q", table.Kind, table.APIVersion)
	}
	var cols []string
	for _, c := range table.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	wantCols := []string{"Namespace", "Name", "Position", "Priority", "Phase", "Queue", "Quota", "Request", "Age", "Message"}
	if diff := cmp.Diff(wantCols, cols); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	// JSON numbers decode as float64.
	want := [][]any{
		{"default", "high", float64(1), float64(10), "Enqueued", "team-a", "team-a", "cpu=4", "90m", "insufficient quota team-a: cpu"},
		{"default", "mid", float64(2), float64(5), "Enqueued", "team-a", "team-a", "cpu=4", "90m", "held back"},
	}
	var got [][]any
	for _, r := range table.Rows {
		got = append(got, r.Cells)
		var meta metav1.PartialObjectMetadata
		if err := json.Unmarshal(r.Object.Raw, &meta); err != nil || meta.Kind != "PartialObjectMetadata" || meta.Namespace != "default" || meta.Name == "" {
			t.Errorf("row object %s: %v", r.Object.Raw, err)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}

	t.Run("v1beta1 when asked only for it", func(t *testing.T) {
		rec := request(t, h, base+"/queues/team-a/queueunits", "application/json;as=Table;v=v1beta1;g=meta.k8s.io")
		var table metav1.Table
		if err := json.Unmarshal(rec.Body.Bytes(), &table); err != nil || table.APIVersion != "meta.k8s.io/v1beta1" || len(table.Rows) != 3 {
			t.Errorf("%d %s", rec.Code, rec.Body.String())
		}
	})
	t.Run("includeObject=Object carries the unit", func(t *testing.T) {
		rec := request(t, h, base+"/queues/team-a/queueunits?limit=1&includeObject=Object", tableAccept)
		var table metav1.Table
		if err := json.Unmarshal(rec.Body.Bytes(), &table); err != nil || len(table.Rows) != 1 {
			t.Fatalf("%d %s", rec.Code, rec.Body.String())
		}
		var unit visibilityv1alpha1.QueueUnitSummary
		if err := json.Unmarshal(table.Rows[0].Object.Raw, &unit); err != nil || unit.Name != "high" || unit.PositionInQueue != 1 ||
			!strings.Contains(string(table.Rows[0].Object.Raw), `"kind":"QueueUnitSummary"`) {
			t.Errorf("object %s: %v", table.Rows[0].Object.Raw, err)
		}
	})
	t.Run("includeObject=None", func(t *testing.T) {
		rec := request(t, h, base+"/queues/team-a/queueunits?includeObject=None", tableAccept)
		var table metav1.Table
		if err := json.Unmarshal(rec.Body.Bytes(), &table); err != nil || len(table.Rows) != 3 || table.Rows[0].Object.Raw != nil {
			t.Errorf("%d %s", rec.Code, rec.Body.String())
		}
	})
	t.Run("plain JSON without as=Table", func(t *testing.T) {
		for _, accept := range []string{"", "application/json", "*/*", "application/vnd.kubernetes.protobuf,application/json"} {
			rec := request(t, h, base+"/queues/team-a/queueunits", accept)
			var s visibilityv1alpha1.QueueUnitsSummary
			if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil || s.Kind != "QueueUnitsSummary" || len(s.Items) != 3 {
				t.Errorf("Accept %q: %d %s", accept, rec.Code, rec.Body.String())
			}
		}
	})
	t.Run("unservable Accept is 406, a bad includeObject 400", func(t *testing.T) {
		for _, accept := range []string{"application/vnd.kubernetes.protobuf", "application/json;as=Table;v=v2;g=meta.k8s.io"} {
			rec := request(t, h, base+"/queues/team-a/queueunits", accept)
			if rec.Code != http.StatusNotAcceptable {
				t.Errorf("Accept %q: %d %s", accept, rec.Code, rec.Body.String())
			}
		}
		rec := request(t, h, base+"/queues/team-a/queueunits?includeObject=All", tableAccept)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "includeObject") {
			t.Errorf("includeObject=All: %d %s", rec.Code, rec.Body.String())
		}
	})
}

func TestFeatureGates(t *testing.T) {
	h := newHandler(t, newFakeSource(), WithGates(features.Gates{QueueUnitActive: true}))
	var got visibilityv1alpha1.FeatureGates
	if code := get(t, h, base+"/featuregates", &got); code != 200 {
		t.Fatalf("code %d", code)
	}
	want := map[string]bool{"QueueUnitActive": true, "MaximumExecutionTime": false, "QueueUnitRequeueState": false}
	if diff := cmp.Diff(want, got.Gates); diff != "" || got.Kind != "FeatureGates" {
		t.Errorf("gates (-want +got):\n%s (kind %q)", diff, got.Kind)
	}
	// Read as a collection, as kube-apiserver names it: list featuregates.
	auth := &fakeAuth{allow: func(a authorizer.Attributes) bool {
		return a.GetUser().GetName() == "reader" && a.GetResource() == "featuregates" && a.GetVerb() == "list"
	}}
	withAuth := newHandler(t, newFakeSource(), WithGates(features.Gates{QueueUnitActive: true}), WithAuth(auth, auth))
	for who, want := range map[string]int{"reader": 200, "other": 403} {
		req := httptest.NewRequest(http.MethodGet, base+"/featuregates", nil)
		req.Header.Set("X-Test-User", who)
		rec := httptest.NewRecorder()
		withAuth.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("%s: %d, want %d", who, rec.Code, want)
		}
	}
}

func TestTenantSeesItsNamespacesWithWholeQueuePositions(t *testing.T) {
	unit := func(ns, name string, pos int32) visibilityv1alpha1.QueueUnitSummary {
		u := pendingUnit(name, 0, pos)
		u.Namespace = ns
		return u
	}
	scope := Scope{Resource: visibilityv1alpha1.ResourceQueues, Name: "team-a"}
	src := &fakeSource{units: map[Scope]map[string][]visibilityv1alpha1.QueueUnitSummary{scope: {
		visibilityv1alpha1.PhaseEnqueued: {unit("a", "a1", 1), unit("b", "b1", 2), unit("a", "a2", 3), unit("c", "c1", 4), unit("b", "b2", 5)},
	}}}
	// carol may get the queue's units and list QueueUnits in a and b;
	// dave may get the queue's units only; admin may do everything.
	auth := &fakeAuth{allow: func(a authorizer.Attributes) bool {
		if a.GetUser().GetName() == "admin" {
			return true
		}
		if a.GetAPIGroup() == "visibility.koord-queue.x-k8s.io" {
			return a.GetVerb() == "get" && a.GetSubresource() == "queueunits"
		}
		return a.GetUser().GetName() == "carol" && a.GetVerb() == "list" && a.GetAPIGroup() == "scheduling.x-k8s.io" &&
			a.GetResource() == "queueunits" && (a.GetNamespace() == "a" || a.GetNamespace() == "b")
	}}
	h := newHandler(t, src, WithAuth(auth, auth))
	call := func(who, query string) visibilityv1alpha1.QueueUnitsSummary {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, base+"/queues/team-a/queueunits"+query, nil)
		req.Header.Set("X-Test-User", who)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var s visibilityv1alpha1.QueueUnitsSummary
		if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil || rec.Code != 200 {
			t.Fatalf("%s: %d %s", who, rec.Code, rec.Body.String())
		}
		return s
	}
	type entry struct {
		Namespace, Name string
		Position        int32
	}
	entriesOf := func(s visibilityv1alpha1.QueueUnitsSummary) []entry {
		var out []entry
		for _, it := range s.Items {
			out = append(out, entry{it.Namespace, it.Name, it.PositionInQueue})
		}
		return out
	}
	got := call("carol", "")
	if diff := cmp.Diff([]entry{{"a", "a1", 1}, {"b", "b1", 2}, {"a", "a2", 3}, {"b", "b2", 5}}, entriesOf(got)); diff != "" || got.Total != 4 {
		t.Errorf("carol (-want +got):\n%s total %d", diff, got.Total)
	}
	// One access review per namespace, not per unit.
	reviews := map[string]int{}
	for _, a := range auth.seen {
		if a.Verb == "list" {
			reviews[a.Namespace]++
		}
	}
	if diff := cmp.Diff(map[string]int{"": 1, "a": 1, "b": 1, "c": 1}, reviews); diff != "" {
		t.Errorf("reviews per namespace (-want +got):\n%s", diff)
	}
	// Paging counts the units the tenant sees.
	if diff := cmp.Diff([]entry{{"a", "a2", 3}}, entriesOf(call("carol", "?offset=2&limit=1"))); diff != "" {
		t.Errorf("carol paged (-want +got):\n%s", diff)
	}
	if got := call("dave", ""); len(got.Items) != 0 || got.Total != 0 {
		t.Errorf("dave, who may list QueueUnits nowhere, sees %+v", got.Items)
	}
	// Allowed to list QueueUnits in every namespace: one review, all units.
	auth.seen = nil
	if got := call("admin", ""); len(got.Items) != 5 || got.Total != 5 {
		t.Errorf("admin sees %d of %d", len(got.Items), got.Total)
	}
	if len(auth.seen) != 2 || auth.seen[1].Namespace != "" || auth.seen[1].Verb != "list" {
		t.Errorf("admin reviews %+v, want the request and one cluster-wide list", auth.seen)
	}
}
