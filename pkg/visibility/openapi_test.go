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
	"slices"
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/handler3"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/koordinator-sh/koord-queue/apis/visibility/openapi"
)

// defPrefix is how the server names the definitions of our types: by Go
// package, as the scheme names them.
const defPrefix = "com.github.koordinator-sh.koord-queue.apis.visibility.v1alpha1."

func TestOpenAPIV2(t *testing.T) {
	h := newHandler(t, newFakeSource())
	rec := request(t, h, "/openapi/v2", "application/json")
	if rec.Code != 200 {
		t.Fatalf("code %d", rec.Code)
	}
	var sw spec.Swagger
	if err := json.Unmarshal(rec.Body.Bytes(), &sw); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		"/apis/visibility.koord-queue.x-k8s.io/v1alpha1/queues/{name}/queueunits",
		"/apis/visibility.koord-queue.x-k8s.io/v1alpha1/elasticquotas/{name}/queueunits",
		"/apis/visibility.koord-queue.x-k8s.io/v1alpha1/featuregates",
		"/apis/visibility.koord-queue.x-k8s.io/v1alpha1/queues/{name}",
	} {
		if item, ok := sw.Paths.Paths[p]; !ok || item.Get == nil {
			t.Errorf("path %s missing", p)
		}
	}
	def, ok := sw.Definitions[defPrefix+"QueueUnitsSummary"]
	if !ok {
		t.Fatalf("QueueUnitsSummary definition missing: %v", sw.Definitions)
	}
	gvks, _ := def.Extensions["x-kubernetes-group-version-kind"].([]any)
	if len(gvks) != 1 || gvks[0].(map[string]any)["kind"] != "QueueUnitsSummary" {
		t.Errorf("x-kubernetes-group-version-kind: %v", def.Extensions)
	}
	// Every reference resolves.
	for name, d := range sw.Definitions {
		for _, ref := range refsIn(t, d) {
			if _, ok := sw.Definitions[strings.TrimPrefix(ref, "#/definitions/")]; !ok {
				t.Errorf("%s refers to missing %s", name, ref)
			}
		}
	}
	etag := rec.Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	req := request(t, h, "/openapi/v2", "")
	if req.Header().Get("ETag") != etag {
		t.Errorf("ETag changed between calls")
	}
	r2 := httptest.NewRequest(http.MethodGet, "/openapi/v2", nil)
	r2.Header.Set("If-None-Match", etag)
	rec2 := httptest.NewRecorder()
	h.ServeHTTP(rec2, r2)
	if rec2.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", rec2.Code)
	}
}

func TestOpenAPIV3(t *testing.T) {
	h := newHandler(t, newFakeSource())
	var root handler3.OpenAPIV3Discovery
	rec := request(t, h, "/openapi/v3", "application/json")
	if err := json.Unmarshal(rec.Body.Bytes(), &root); err != nil || rec.Code != 200 {
		t.Fatalf("%d %s: %v", rec.Code, rec.Body.String(), err)
	}
	gv, ok := root.Paths["apis/visibility.koord-queue.x-k8s.io/v1alpha1"]
	if !ok || !strings.HasPrefix(gv.ServerRelativeURL, "/openapi/v3/apis/visibility.koord-queue.x-k8s.io/v1alpha1?hash=") {
		t.Fatalf("discovery %+v", root)
	}
	rec = request(t, h, gv.ServerRelativeURL, "application/json")
	var doc spec3.OpenAPI
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || rec.Code != 200 {
		t.Fatalf("%d: %v", rec.Code, err)
	}
	if doc.Components == nil || doc.Components.Schemas[defPrefix+"QueueUnitSummary"] == nil {
		t.Fatalf("QueueUnitSummary schema missing")
	}
	summary := doc.Components.Schemas[defPrefix+"QueueUnitsSummary"]
	if summary == nil {
		t.Fatalf("QueueUnitsSummary schema missing")
	}
	if items, err := json.Marshal(summary.Properties["items"]); err != nil ||
		!strings.Contains(string(items), `"#/components/schemas/`+defPrefix+`QueueUnitSummary"`) {
		t.Errorf("items of QueueUnitsSummary: %s", items)
	}
	if p := doc.Paths.Paths["/apis/visibility.koord-queue.x-k8s.io/v1alpha1/queues/{name}/queueunits"]; p == nil || p.Get == nil {
		t.Errorf("queues path missing")
	}
}

// refsIn lists the $ref values inside a schema.
func refsIn(t *testing.T, s spec.Schema) []string {
	t.Helper()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, val := range x {
				if k == "$ref" {
					out = append(out, val.(string))
				}
				walk(val)
			}
		case []any:
			for _, val := range x {
				walk(val)
			}
		}
	}
	var v any
	_ = json.Unmarshal(data, &v)
	walk(v)
	return out
}

// TestOpenAPIMatchesTheTypes: every kind the served document describes has
// the fields the Go types have, as openapi-gen reads them
// (apis/visibility/openapi).
func TestOpenAPIMatchesTheTypes(t *testing.T) {
	generated := openapi.GetOpenAPIDefinitions(func(path string) spec.Ref { return spec.MustCreateRef(path) })
	rec := request(t, newHandler(t, newFakeSource()), "/openapi/v2", "application/json")
	var sw spec.Swagger
	if err := json.Unmarshal(rec.Body.Bytes(), &sw); err != nil {
		t.Fatal(err)
	}
	// FeatureGates is served as a list (GET .../featuregates), whose answer
	// the generic server does not describe.
	for _, kind := range []string{"QueueUnitsSummary", "QueueUnitSummary", "Quota", "QuotaResource", "QuotaList"} {
		gen, ok := generated["github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1."+kind]
		if !ok {
			t.Fatalf("openapi-gen has no definition of %s", kind)
		}
		var want []string
		for name := range gen.Schema.Properties {
			want = append(want, name)
		}
		doc, ok := sw.Definitions[defPrefix+kind]
		if !ok {
			t.Fatalf("the served document has no definition of %s", kind)
		}
		var got []string
		for name := range doc.Properties {
			got = append(got, name)
		}
		slices.Sort(want)
		slices.Sort(got)
		if len(got) == 0 || !slices.Equal(got, want) {
			t.Errorf("%s: served properties %v, the type has %v", kind, got, want)
		}
	}
}
