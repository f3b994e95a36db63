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

package jobext

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/job"
)

// watchGate holds what the API server sends on the manager's Job watches
// while it is shut: a cache that lags behind the API, as a slow watch does.
type watchGate struct {
	mu   sync.Mutex
	open chan struct{} // closed while the gate is open
}

func newWatchGate() *watchGate {
	g := &watchGate{open: make(chan struct{})}
	close(g.open)
	return g
}

func (g *watchGate) shut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
		g.open = make(chan struct{})
	default:
	}
}

func (g *watchGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

func (g *watchGate) wait() {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	<-open
}

// wrap passes every request, and gates the bodies of Job watches.
func (g *watchGate) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err != nil || !strings.HasSuffix(req.URL.Path, "/jobs") || req.URL.Query().Get("watch") != "true" {
			return resp, err
		}
		resp.Body = &gatedBody{ReadCloser: resp.Body, gate: g}
		return resp, nil
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// gatedBody hands on what it read only while its gate is open.
type gatedBody struct {
	io.ReadCloser
	gate *watchGate
}

func (b *gatedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.gate.wait()
	return n, err
}

// chaos/j-00137 on a real API server: the controllers resume an admitted
// Job while their Job watch lags, and the unit is evicted before the watch
// brings the resume. Their cache still shows the Job suspended with no pods;
// they must not hand the admission back on it (the Job controller may be
// starting pods), but wait for their own write, then suspend the Job and
// hand the unit back.
func TestEvictionWaitsForTheCacheToSeeItsResume(t *testing.T) {
	gate := newWatchGate()
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(gate.wrap)
	c, ns := startManagerWith(t, cfg, []string{job.Name}, nil)
	t.Cleanup(gate.release) // before the manager stops
	ctx := context.Background()
	if err := c.Create(ctx, batchJob(ns, "lagging", true, map[string]string{schedv1alpha1.QuotaNameLabel: quota})); err != nil {
		t.Fatal(err)
	}
	waitUnit(t, c, ns, "lagging", "queue unit", anyUnit)
	enqueue(t, c, ns, "lagging")

	gate.shut()
	admit(t, c, ns, "lagging")
	waitJobSuspend(t, c, ns, "lagging", false)
	evictUnit(t, c, ns, "lagging")
	quiet(t)
	if u := waitUnit(t, c, ns, "lagging", "unit", anyUnit); requeued(u) || len(u.Status.Admissions) == 0 {
		t.Fatalf("admission handed back on a Job cache older than the controllers' own resume: phase %s, admissions %d",
			u.Status.Phase, len(u.Status.Admissions))
	}

	gate.release()
	waitJobSuspend(t, c, ns, "lagging", true)
	waitUnit(t, c, ns, "lagging", "Enqueued once the cache caught up", requeued)
}
