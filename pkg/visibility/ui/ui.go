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
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed assets
var assets embed.FS

// ContentSecurityPolicy lets the page load and call only its own origin, run
// no inline script or style, and be framed by nobody.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// contentTypes are the types of the files the page is made of.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

type file struct {
	data        []byte
	contentType string
	etag        string
}

// Files returns the embedded files by name (tests).
func Files() (fs.FS, error) { return fs.Sub(assets, "assets") }

// Handler serves the page's files by the last element of the request path,
// wherever it is mounted: a path ending in "/" gets index.html, an unknown
// name 404. Every answer forbids caching without revalidation (an upgraded
// server serves its new script at once) and carries ContentSecurityPolicy.
func Handler() http.Handler {
	root, err := Files()
	if err != nil {
		panic(err) // the embedded folder is part of the binary
	}
	files := map[string]file{}
	entries, err := fs.ReadDir(root, ".")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		data, err := fs.ReadFile(root, e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(data)
		files[e.Name()] = file{data: data, contentType: contentTypes[path.Ext(e.Name())], etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "the web view is read-only", http.StatusMethodNotAllowed)
			return
		}
		name := "index.html"
		if !strings.HasSuffix(r.URL.Path, "/") {
			name = path.Base(r.URL.Path)
		}
		f, ok := files[name]
		if !ok || f.contentType == "" {
			http.NotFound(w, r)
			return
		}
		h.Set("Content-Type", f.contentType)
		h.Set("ETag", f.etag)
		if r.Header.Get("If-None-Match") == f.etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(f.data)
	})
}
