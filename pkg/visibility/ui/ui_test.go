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

package ui

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

const mount = "/apis/visibility.koord-queue.x-k8s.io/v1alpha1/ui/"

func get(t *testing.T, h http.Handler, method, path string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestServesTheFilesWithTheirTypes(t *testing.T) {
	h := Handler()
	for path, want := range map[string]struct {
		contentType, contains string
	}{
		mount:                {"text/html; charset=utf-8", `<script src="app.js"`},
		mount + "index.html": {"text/html; charset=utf-8", "<title>koord-queue</title>"},
		mount + "app.js":     {"text/javascript; charset=utf-8", "function route()"},
		mount + "style.css":  {"text/css; charset=utf-8", ".bar .used"},
	} {
		rec := get(t, h, http.MethodGet, path, nil)
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s: %d", path, rec.Code)
			continue
		}
		if got := rec.Header().Get("Content-Type"); got != want.contentType {
			t.Errorf("GET %s: Content-Type %q, want %q", path, got, want.contentType)
		}
		if !strings.Contains(rec.Body.String(), want.contains) {
			t.Errorf("GET %s: body lacks %q", path, want.contains)
		}
		csp := rec.Header().Get("Content-Security-Policy")
		for _, directive := range []string{"default-src 'self'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, directive) {
				t.Errorf("GET %s: Content-Security-Policy %q lacks %q", path, csp, directive)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") || strings.Contains(csp, "*") {
			t.Errorf("GET %s: Content-Security-Policy %q allows more than the page's origin", path, csp)
		}
		if got := rec.Header().Get("Cache-Control"); got != "no-cache" {
			t.Errorf("GET %s: Cache-Control %q, want no-cache (revalidate, so an upgrade shows at once)", path, got)
		}
		if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s: X-Content-Type-Options %q", path, got)
		}
	}
}

func TestRevalidationAndRefusals(t *testing.T) {
	h := Handler()
	first := get(t, h, http.MethodGet, mount+"app.js", nil)
	etag := first.Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if rec := get(t, h, http.MethodGet, mount+"app.js", map[string]string{"If-None-Match": etag}); rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Errorf("revalidation: %d with %d bytes, want 304 and none", rec.Code, rec.Body.Len())
	}
	if rec := get(t, h, http.MethodHead, mount+"app.js", nil); rec.Code != http.StatusOK || rec.Body.Len() != 0 {
		t.Errorf("HEAD: %d with %d bytes", rec.Code, rec.Body.Len())
	}
	for _, path := range []string{mount + "missing.js", mount + "../../quotas", mount + "sub/"} {
		rec := get(t, h, http.MethodGet, path, nil)
		if path == mount+"sub/" {
			// Any folder is the page (hash routing keeps one document).
			if rec.Code != http.StatusOK {
				t.Errorf("GET %s: %d", path, rec.Code)
			}
			continue
		}
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, rec.Code)
		}
	}
	if rec := get(t, h, http.MethodPost, mount+"app.js", nil); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", rec.Code)
	}
}

// externalRef finds a reference to another origin: a URL with a scheme, a
// protocol-relative one in src/href/url()/import, or a fetch of one.
var externalRef = regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|(src|href|action)\s*=\s*["']?\s*//|url\(\s*["']?//|@import`)

func TestNoAssetComesFromElsewhere(t *testing.T) {
	root, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	err = fs.WalkDir(root, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		names = append(names, path)
		data, err := fs.ReadFile(root, path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if m := externalRef.FindString(line); m != "" {
				t.Errorf("%s:%d refers to another origin (%q): every asset must be embedded", path, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 3 {
		t.Fatalf("embedded files %v, want index.html, app.js and style.css at least", names)
	}
}

// The scanner itself must catch what it is for.
func TestExternalRefPattern(t *testing.T) {
	for _, bad := range []string{`<script src="https://cdn.example.com/x.js">`, `<link href="//fonts.example.org/a.css">`,
		`background: url(//img.example.net/a.png)`, `@import "x.css";`, `fetch('http://example.com/api')`} {
		if !externalRefMatches(bad) {
			t.Errorf("not caught: %s", bad)
		}
	}
	for _, good := range []string{`<script src="app.js" defer></script>`, `// a comment`, `const VIS = PREFIX + GROUP_PATH;`} {
		if externalRefMatches(good) {
			t.Errorf("caught wrongly: %s", good)
		}
	}
}

func externalRefMatches(s string) bool { return externalRef.MatchString(s) }
