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
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/koordinator-sh/koord-queue/pkg/visibility/ui"
)

func serve(h http.Handler, path, who string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if who != "" {
		req.Header.Set("X-Test-User", who)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestUIOffByDefault(t *testing.T) {
	h := newHandler(t, newFakeSource())
	for _, path := range []string{base + "/ui/", base + "/ui", base + "/ui/app.js"} {
		if rec := serve(h, path, ""); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s without a UI: %d, want 404", path, rec.Code)
		}
	}
}

func TestUIMounted(t *testing.T) {
	h := newHandler(t, newFakeSource(), WithUI(ui.Handler()))
	rec := serve(h, base+"/ui/", "")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("GET .../ui/: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	if rec := serve(h, base+"/ui/app.js", ""); rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/javascript") {
		t.Errorf("GET .../ui/app.js: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	rec = serve(h, base+"/ui", "")
	if rec.Code != http.StatusMovedPermanently {
		t.Fatalf("GET .../ui: %d, want a redirect", rec.Code)
	}
	// The browser resolves the Location against .../v1alpha1/ui.
	loc, err := rec.Result().Location()
	if err != nil || loc.Path != base+"/ui/" {
		t.Errorf("GET .../ui redirects to %v (%v), want %s/ui/", loc, err, base)
	}
	// The API beside it is unchanged.
	if rec := serve(h, base+"/quotas", ""); rec.Code != http.StatusOK {
		t.Errorf("GET .../quotas beside the UI: %d", rec.Code)
	}
}

// The page and its files are authorized as resource ui, named as
// kube-apiserver names them before proxying: the folder is a collection (list),
// a file a named object (get).
func TestUIAuthorizedAsResourceUI(t *testing.T) {
	auth := &fakeAuth{allow: func(a authorizer.Attributes) bool {
		return a.GetUser().GetName() == "viewer" && a.IsResourceRequest() && a.GetResource() == ResourceUI &&
			a.GetAPIGroup() == gv.Group && (a.GetVerb() == "get" || a.GetVerb() == "list")
	}}
	h := newHandler(t, newFakeSource(), WithUI(ui.Handler()), WithAuth(auth, auth))
	for path, verb := range map[string]string{base + "/ui/": "list", base + "/ui/app.js": "get", base + "/ui/style.css": "get"} {
		auth.seen = nil
		if rec := serve(h, path, "viewer"); rec.Code != http.StatusOK {
			t.Errorf("viewer GET %s: %d", path, rec.Code)
		}
		if len(auth.seen) != 1 || auth.seen[0].Verb != verb || auth.seen[0].Resource != ResourceUI {
			t.Errorf("GET %s asked %+v, want one %s of resource ui", path, auth.seen, verb)
		}
		if rec := serve(h, path, "stranger"); rec.Code != http.StatusForbidden ||
			!strings.Contains(rec.Body.String(), `cannot `+verb+` resource \"ui\"`) {
			t.Errorf("stranger GET %s: %d %s", path, rec.Code, rec.Body.String())
		}
		if rec := serve(h, path, ""); rec.Code != http.StatusForbidden {
			t.Errorf("anonymous GET %s: %d, want 403", path, rec.Code)
		}
	}
	// May read the page, not the queues: the page shows nothing more than
	// the API would.
	if rec := serve(h, base+"/queues/team-a/queueunits", "viewer"); rec.Code != http.StatusForbidden {
		t.Errorf("viewer GET queues: %d, want 403", rec.Code)
	}
}
