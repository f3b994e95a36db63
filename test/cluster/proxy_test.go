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

package cluster

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

const unitsPath = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/n/queueunits"

// backendWatch is one watch the fake API server serves: each line sent on
// events is written and flushed, then acknowledged on sent.
type backendWatch struct {
	events chan string
	sent   chan struct{}
}

// fakeAPI serves a list of units, watches of units (handed to the test on
// opened) and a watch of pods with one event; it records the headers of
// the list.
func fakeAPI(t *testing.T) (srv *httptest.Server, opened chan backendWatch, listHeaders chan http.Header) {
	opened = make(chan backendWatch)
	listHeaders = make(chan http.Header, 1)
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		flush := http.NewResponseController(w).Flush
		switch {
		case r.URL.Path == unitsPath && r.URL.Query().Get("watch") == "true":
			w.WriteHeader(http.StatusOK)
			_ = flush()
			bw := backendWatch{events: make(chan string), sent: make(chan struct{})}
			select {
			case opened <- bw:
			case <-r.Context().Done():
				return
			}
			for {
				select {
				case ev := <-bw.events:
					_, _ = io.WriteString(w, ev+"\n")
					_ = flush()
					bw.sent <- struct{}{}
				case <-r.Context().Done():
					return
				}
			}
		case r.URL.Path == unitsPath:
			listHeaders <- r.Header.Clone()
			_, _ = io.WriteString(w, "list\n")
		case r.URL.Path == "/api/v1/namespaces/n/pods":
			_, _ = io.WriteString(w, "pod-event\n")
			_ = flush()
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, opened, listHeaders
}

// lines reads body line by line onto a channel.
func lines(body io.Reader) <-chan string {
	out := make(chan string, 16)
	go func() {
		r := bufio.NewReader(body)
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				return
			}
			out <- strings.TrimSuffix(l, "\n")
		}
	}()
	return out
}

func expectLine(t *testing.T, what string, from <-chan string, want string) {
	t.Helper()
	select {
	case got := <-from:
		if got != want {
			t.Fatalf("%s: got %q, want %q", what, got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: nothing within 10s, want %q", what, want)
	}
}

// A stalled watch receives nothing, and a watch of the same resource
// opened meanwhile neither, while a list and another resource's watch pass
// on the same HTTP/2 connection, with the replica's headers; resuming
// delivers what was held.
func TestProxyStallsOneResourcesWatches(t *testing.T) {
	backend, opened, listHeaders := fakeAPI(t)
	target, _ := url.Parse(backend.URL)
	upstream := x509.NewCertPool()
	upstream.AddCert(backend.Certificate())
	certs, err := newPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p, err := newAPIProxy(target, upstream, certs.servingCert, certs.servingKey)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.close() })
	cas, err := certPool(certs.caCert)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cas}, ForceAttemptHTTP2: true}}
	get := func(path string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://"+p.addr()+path, nil)
		req.Header.Set("Authorization", "Bearer replica-token")
		req.Header.Set("Impersonate-User", "system:serviceaccount:koord-queue:koord-queue")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = resp.Body.Close() })
		if resp.ProtoMajor != 2 {
			t.Fatalf("%s over %s, want HTTP/2", path, resp.Proto)
		}
		return resp
	}

	watched := lines(get(unitsPath + "?watch=true").Body)
	first := <-opened
	first.events <- "e1"
	<-first.sent
	expectLine(t, "the watch before the stall", watched, "e1")

	p.setStalled("queueunits", true)
	first.events <- "e2"
	<-first.sent
	expectLine(t, "a list during the stall", lines(get(unitsPath).Body), "list")
	h := <-listHeaders
	if h.Get("Authorization") != "Bearer replica-token" || h.Get("Impersonate-User") != "system:serviceaccount:koord-queue:koord-queue" {
		t.Errorf("the API server got Authorization %q and Impersonate-User %q, want the replica's own", h.Get("Authorization"), h.Get("Impersonate-User"))
	}
	expectLine(t, "a watch of pods during the stall", lines(get("/api/v1/namespaces/n/pods?watch=true").Body), "pod-event")
	late := lines(get(unitsPath + "?watch=true").Body)
	second := <-opened
	second.events <- "e3"
	<-second.sent
	select {
	case got := <-watched:
		t.Fatalf("the stalled watch received %q", got)
	case got := <-late:
		t.Fatalf("a watch opened during the stall received %q", got)
	case <-time.After(300 * time.Millisecond):
	}

	p.setStalled("queueunits", false)
	expectLine(t, "the stalled watch, resumed", watched, "e2")
	expectLine(t, "the watch opened during the stall, resumed", late, "e3")
}

func TestWatchOf(t *testing.T) {
	for path, want := range map[string]string{
		unitsPath + "?watch=true":                "queueunits",
		unitsPath + "?watch=1&resourceVersion=5": "queueunits",
		unitsPath:                                "",
		unitsPath + "/u-1?watch=true":            "queueunits",
		"/apis/scheduling.x-k8s.io/v1alpha1/queueunits?watch=true":               "queueunits",
		"/api/v1/namespaces/n/pods?watch=true":                                   "pods",
		"/api/v1/namespaces?watch=true":                                          "namespaces",
		"/api/v1/namespaces/n?watch=true":                                        "namespaces",
		"/apis/coordination.k8s.io/v1/namespaces/koord-queue/leases/koord-queue": "",
		"/version?watch=true":                                                    "",
	} {
		r, _ := http.NewRequest(http.MethodGet, "https://127.0.0.1"+path, nil)
		if got := watchOf(r); got != want {
			t.Errorf("watchOf(%s) = %q, want %q", path, got, want)
		}
	}
}
