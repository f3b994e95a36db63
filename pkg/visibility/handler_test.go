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
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
)

// fakeSource holds units by scope and phase.
type fakeSource struct {
	units map[Scope]map[string][]visibilityv1alpha1.QueueUnitSummary
	// why is the message Explain gives, by unit name.
	why map[string]string
}

func (f *fakeSource) Units(_ context.Context, scope Scope, phase string) ([]visibilityv1alpha1.QueueUnitSummary, bool, error) {
	byPhase, ok := f.units[scope]
	if !ok {
		return nil, false, nil
	}
	return append([]visibilityv1alpha1.QueueUnitSummary{}, byPhase[phase]...), true, nil
}

func (f *fakeSource) Explain(_ context.Context, items []visibilityv1alpha1.QueueUnitSummary) {
	for i := range items {
		items[i].Message = f.why[items[i].Name]
	}
}

func (f *fakeSource) Quotas(context.Context) ([]visibilityv1alpha1.Quota, error) { return nil, nil }

func pendingUnit(name string, prio, pos int32) visibilityv1alpha1.QueueUnitSummary {
	return visibilityv1alpha1.QueueUnitSummary{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Phase:      visibilityv1alpha1.PhaseEnqueued, Queue: "team-a", Quota: "team-a",
		Priority: prio, PositionInQueue: pos,
		Request: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
	}
}

func newFakeSource() *fakeSource {
	pending := []visibilityv1alpha1.QueueUnitSummary{pendingUnit("high", 10, 1), pendingUnit("mid", 5, 2), pendingUnit("low", 0, 3)}
	running := []visibilityv1alpha1.QueueUnitSummary{{ObjectMeta: metav1.ObjectMeta{Name: "first", Namespace: "default"}, Phase: visibilityv1alpha1.PhaseRunning, Queue: "team-a"}}
	return &fakeSource{
		units: map[Scope]map[string][]visibilityv1alpha1.QueueUnitSummary{
			{Resource: visibilityv1alpha1.ResourceQueues, Name: "team-a"}:        {visibilityv1alpha1.PhaseEnqueued: pending, visibilityv1alpha1.PhaseRunning: running},
			{Resource: visibilityv1alpha1.ResourceElasticQuotas, Name: "team-a"}: {visibilityv1alpha1.PhaseEnqueued: pending},
		},
		why: map[string]string{"high": "insufficient quota team-a: cpu", "mid": "held back", "low": "held back"},
	}
}

const base = "/apis/visibility.koord-queue.x-k8s.io/v1alpha1"

func get(t *testing.T, h http.Handler, path string, out any) int {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("GET %s: Content-Type %q", path, ct)
	}
	if out != nil {
		if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
			t.Fatalf("GET %s: decode %q: %v", path, rec.Body.String(), err)
		}
	}
	return rec.Code
}

// newHandler is the server's handler chain for src; it fails the test when
// it cannot be built.
func newHandler(t *testing.T, src Source, opts ...Option) http.Handler {
	t.Helper()
	h, err := NewHandler(src, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func names(s *visibilityv1alpha1.QueueUnitsSummary) []string {
	var out []string
	for _, it := range s.Items {
		out = append(out, it.Name)
	}
	return out
}

func TestQueueUnits(t *testing.T) {
	h := newHandler(t, newFakeSource())
	cases := []struct {
		name      string
		path      string
		wantCode  int
		wantNames []string
		wantTotal int32
		wantPhase string
	}{
		{name: "queue in order", path: base + "/queues/team-a/queueunits", wantCode: 200, wantNames: []string{"high", "mid", "low"}, wantTotal: 3, wantPhase: "Enqueued"},
		{name: "quota in order", path: base + "/elasticquotas/team-a/queueunits", wantCode: 200, wantNames: []string{"high", "mid", "low"}, wantTotal: 3, wantPhase: "Enqueued"},
		{name: "the queue itself answers the same", path: base + "/queues/team-a?limit=2", wantCode: 200, wantNames: []string{"high", "mid"}, wantTotal: 3, wantPhase: "Enqueued"},
		{name: "limit", path: base + "/queues/team-a/queueunits?limit=2", wantCode: 200, wantNames: []string{"high", "mid"}, wantTotal: 3, wantPhase: "Enqueued"},
		{name: "offset and limit", path: base + "/queues/team-a/queueunits?offset=1&limit=1", wantCode: 200, wantNames: []string{"mid"}, wantTotal: 3, wantPhase: "Enqueued"},
		{name: "offset past the end", path: base + "/queues/team-a/queueunits?offset=7", wantCode: 200, wantTotal: 3, wantPhase: "Enqueued"},
		{name: "phase Enqueued explicit, any case", path: base + "/queues/team-a/queueunits?phase=enqueued", wantCode: 200, wantNames: []string{"high", "mid", "low"}, wantTotal: 3, wantPhase: "Enqueued"},
		{name: "phase Running", path: base + "/queues/team-a/queueunits?phase=Running", wantCode: 200, wantNames: []string{"first"}, wantTotal: 1, wantPhase: "Running"},
		{name: "phase Dequeued empty", path: base + "/queues/team-a/queueunits?phase=Dequeued", wantCode: 200, wantPhase: "Dequeued"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got visibilityv1alpha1.QueueUnitsSummary
			if code := get(t, h, tc.path, &got); code != tc.wantCode {
				t.Fatalf("code %d, want %d", code, tc.wantCode)
			}
			if diff := cmp.Diff(tc.wantNames, names(&got)); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			if got.Total != tc.wantTotal || got.Phase != tc.wantPhase || got.Kind != "QueueUnitsSummary" || got.APIVersion != base[len("/apis/"):] {
				t.Errorf("got total=%d phase=%q kind=%q apiVersion=%q", got.Total, got.Phase, got.Kind, got.APIVersion)
			}
			if got.Items == nil {
				t.Errorf("items is null, want a list")
			}
		})
	}
}

func TestQueueUnitsCarryPositionAndReason(t *testing.T) {
	var got visibilityv1alpha1.QueueUnitsSummary
	get(t, newHandler(t, newFakeSource()), base+"/queues/team-a/queueunits?offset=1", &got)
	want := []visibilityv1alpha1.QueueUnitSummary{pendingUnit("mid", 5, 2), pendingUnit("low", 0, 3)}
	want[0].Message, want[1].Message = "held back", "held back"
	if diff := cmp.Diff(want, got.Items); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	if got.Offset != 1 {
		t.Errorf("offset %d, want 1", got.Offset)
	}
}

func TestErrors(t *testing.T) {
	h := newHandler(t, newFakeSource())
	cases := []struct {
		name, path    string
		wantCode      int
		wantReason    metav1.StatusReason
		wantInMessage string
	}{
		{"unknown queue", base + "/queues/nope/queueunits", 404, metav1.StatusReasonNotFound, `queues.visibility.koord-queue.x-k8s.io "nope" not found`},
		{"unknown quota", base + "/elasticquotas/nope/queueunits", 404, metav1.StatusReasonNotFound, `elasticquotas.visibility.koord-queue.x-k8s.io "nope" not found`},
		{"unknown phase", base + "/queues/team-a/queueunits?phase=Pending", 400, metav1.StatusReasonBadRequest, "Enqueued, Reserved, Dequeued, Running"},
		{"bad limit", base + "/queues/team-a/queueunits?limit=-1", 400, metav1.StatusReasonBadRequest, "limit"},
		{"bad offset", base + "/queues/team-a/queueunits?offset=x", 400, metav1.StatusReasonBadRequest, "offset"},
		{"unknown path", base + "/queues/team-a/pods", 404, metav1.StatusReasonNotFound, ""},
		{"unknown queue, parent path", base + "/queues/nope", 404, metav1.StatusReasonNotFound, `"nope" not found`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var st metav1.Status
			if code := get(t, h, tc.path, &st); code != tc.wantCode {
				t.Fatalf("code %d, want %d", code, tc.wantCode)
			}
			if st.Kind != "Status" || st.Reason != tc.wantReason || int(st.Code) != tc.wantCode || !strings.Contains(st.Message, tc.wantInMessage) {
				t.Errorf("status %+v", st)
			}
		})
	}
}

func TestDiscovery(t *testing.T) {
	h := newHandler(t, newFakeSource())
	var groups metav1.APIGroupList
	if code := get(t, h, "/apis", &groups); code != 200 || len(groups.Groups) != 1 || groups.Groups[0].PreferredVersion.GroupVersion != "visibility.koord-queue.x-k8s.io/v1alpha1" {
		t.Errorf("/apis: %d %+v", code, groups)
	}
	var group metav1.APIGroup
	if code := get(t, h, "/apis/visibility.koord-queue.x-k8s.io", &group); code != 200 || group.Name != "visibility.koord-queue.x-k8s.io" {
		t.Errorf("group: %d %+v", code, group)
	}
	var list metav1.APIResourceList
	if code := get(t, h, base, &list); code != 200 {
		t.Fatalf("resource list: %d", code)
	}
	got := map[string][]string{}
	for _, r := range list.APIResources {
		got[r.Name] = r.Verbs
		if r.Namespaced {
			t.Errorf("%s is namespaced", r.Name)
		}
	}
	want := map[string][]string{
		"queues": {"get"}, "queues/queueunits": {"get"},
		"elasticquotas": {"get"}, "elasticquotas/queueunits": {"get"},
		"featuregates": {"list"}, "quotas": {"get", "list"},
	}
	if diff := cmp.Diff(want, got); diff != "" || list.GroupVersion != "visibility.koord-queue.x-k8s.io/v1alpha1" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
}

// fakeAuth knows users by the header X-Test-User and allows what allow says.
type fakeAuth struct {
	allow func(a authorizer.Attributes) bool
	seen  []authorizer.AttributesRecord
}

func (f *fakeAuth) AuthenticateRequest(r *http.Request) (*authenticator.Response, bool, error) {
	name := r.Header.Get("X-Test-User")
	if name == "" {
		return nil, false, nil
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: name}}, true, nil
}

func (f *fakeAuth) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	f.seen = append(f.seen, authorizer.AttributesRecord{
		User: a.GetUser(), Verb: a.GetVerb(), Namespace: a.GetNamespace(), APIGroup: a.GetAPIGroup(), APIVersion: a.GetAPIVersion(),
		Resource: a.GetResource(), Subresource: a.GetSubresource(), Name: a.GetName(), ResourceRequest: a.IsResourceRequest(), Path: a.GetPath(),
	})
	if f.allow(a) {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func TestAuth(t *testing.T) {
	auth := &fakeAuth{allow: func(a authorizer.Attributes) bool { return a.GetUser().GetName() == "admin" }}
	h := newHandler(t, newFakeSource(), WithAuth(auth, auth))
	do := func(path, who string) (int, metav1.Status) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if who != "" {
			req.Header.Set("X-Test-User", who)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var st metav1.Status
		_ = json.Unmarshal(rec.Body.Bytes(), &st)
		return rec.Code, st
	}
	if code, _ := do(base+"/queues/team-a/queueunits", "admin"); code != 200 {
		t.Errorf("admin: %d", code)
	}
	wantAttrs := authorizer.AttributesRecord{
		User: &user.DefaultInfo{Name: "admin"}, Verb: "get", APIGroup: "visibility.koord-queue.x-k8s.io", APIVersion: "v1alpha1",
		Resource: "queues", Subresource: "queueunits", Name: "team-a", ResourceRequest: true, Path: base + "/queues/team-a/queueunits",
	}
	if diff := cmp.Diff(wantAttrs, auth.seen[0]); diff != "" {
		t.Errorf("attributes (-want +got):\n%s", diff)
	}
	code, st := do(base+"/elasticquotas/team-a/queueunits", "bob")
	if code != 403 || st.Reason != metav1.StatusReasonForbidden ||
		!strings.Contains(st.Message, `User "bob" cannot get resource "elasticquotas/queueunits" in API group "visibility.koord-queue.x-k8s.io"`) {
		t.Errorf("bob: %d %+v", code, st)
	}
	if code, st := do(base, "bob"); code != 403 || !strings.Contains(st.Message, `cannot get path`) {
		t.Errorf("bob discovery: %d %+v", code, st)
	}
	// Without credentials a request is anonymous: refused unless the
	// cluster lets system:anonymous read; the health paths answer anyone.
	if code, st := do(base+"/queues/team-a/queueunits", ""); code != 403 || !strings.Contains(st.Message, `User "system:anonymous" cannot get`) {
		t.Errorf("anonymous: %d %+v", code, st)
	}
	if code, _ := do("/healthz/ping", ""); code != 200 {
		t.Errorf("healthz refused: %d", code)
	}
	// Reading the quotas is list, one quota get, as kube-apiserver names them.
	if code, st := do(base+"/quotas", "bob"); code != 403 ||
		!strings.Contains(st.Message, `User "bob" cannot list resource "quotas"`) {
		t.Errorf("bob quotas: %d %+v", code, st)
	}
	if code, st := do(base+"/quotas/team-a", "bob"); code != 403 ||
		!strings.Contains(st.Message, `User "bob" cannot get resource "quotas"`) {
		t.Errorf("bob quota team-a: %d %+v", code, st)
	}
}

// TestReplicaState: before the caches sync, reads of the scheduler's memory
// are refused with 503 naming what is missing (discovery still answers, so
// the APIService stays Available); a follower's answers carry a warning.
func TestReplicaState(t *testing.T) {
	fv := newFakeView(t)
	fv.unsynced = []string{"QueueUnits", "quota plugins"}
	h := newHandler(t, FromScheduler(fv))
	for _, path := range []string{base + "/queues/q/queueunits", base + "/elasticquotas/team-a", base + "/quotas"} {
		var st metav1.Status
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("GET %s before sync: %d %s, want 503", path, rec.Code, rec.Body)
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
			t.Fatal(err)
		}
		if st.Reason != metav1.StatusReasonServiceUnavailable || !strings.Contains(st.Message, "QueueUnits, quota plugins") {
			t.Errorf("GET %s before sync: %+v, want ServiceUnavailable naming QueueUnits and the quota plugins", path, st)
		}
	}
	if code := get(t, h, base, nil); code != http.StatusOK {
		t.Errorf("discovery before sync: %d, want 200", code)
	}

	for _, follower := range []bool{true, false} {
		fv.unsynced, fv.follower = nil, follower
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, base+"/queues/q/queueunits", nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET after sync (follower %v): %d %s", follower, rec.Code, rec.Body)
		}
		warning := rec.Header().Get("Warning")
		if follower && (!strings.HasPrefix(warning, `299 - "`) || !strings.Contains(warning, "not the leader")) {
			t.Errorf("follower's Warning header %q, want 299 saying it is not the leader", warning)
		}
		if !follower && warning != "" {
			t.Errorf("leader's Warning header %q, want none", warning)
		}
	}
}
