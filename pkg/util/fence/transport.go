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

package fence

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/koordinator-sh/koord-queue/pkg/util/mutation"
)

// Fence tells until when this replica may send writes.
type Fence interface {
	// ValidUntil is the moment writes must have left by; zero: none may.
	ValidUntil() time.Time
}

var _ Fence = (*Lock)(nil)

// ErrFenced is the error of a write the fence kept back: it was not sent.
var ErrFenced = errors.New("write not sent: this replica may no longer hold its leader lease")

// WrapTransport returns a rest.Config.WrapTransport that fences writes:
// client-go calls it after its rate limiter and on every retry, right
// before a request goes on the wire. A write (POST, PUT, PATCH, DELETE)
// leaves only while f allows it, with its context cut at f's end and the
// API server told the same deadline (query parameter timeout); any other
// write fails with ErrFenced, unsent. A write that left is not cut short
// when its caller's context ends (a stopping leader): it finishes or meets
// f's end, so a leader that stops drains what it sent before it gives its
// lease up. Reads pass untouched.
func WrapTransport(f Fence, clk clock.PassiveClock) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return &roundTripper{next: next, fence: f, clock: clk}
	}
}

type roundTripper struct {
	next  http.RoundTripper
	fence Fence
	clock clock.PassiveClock
}

var _ http.RoundTripper = (*roundTripper)(nil)

// WrappedRoundTripper lets client-go find the transport underneath.
func (t *roundTripper) WrappedRoundTripper() http.RoundTripper { return t.next }

func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if !isWrite(req.Method) || mutation.On(mutation.NoFence) {
		return t.next.RoundTrip(req)
	}
	var left time.Duration
	if until := t.fence.ValidUntil(); !until.IsZero() {
		left = until.Sub(t.clock.Now())
	}
	if left <= 0 {
		// A RoundTripper closes the body, even when it sends nothing.
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("%w (%s %s)", ErrFenced, req.Method, req.URL.Path)
	}
	// Cancelling a request on the wire does not take it back, so the
	// caller's end does not cut it: only the fence does.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(req.Context()), left)
	out := req.Clone(ctx)
	q := out.URL.Query()
	// The API server gives up on the request at the same moment; a
	// shorter timeout the caller chose stays.
	if d, err := time.ParseDuration(q.Get("timeout")); err != nil || d <= 0 || d > left {
		q.Set("timeout", max(left.Truncate(time.Millisecond), time.Millisecond).String())
		out.URL.RawQuery = q.Encode()
	}
	resp, err := t.next.RoundTrip(out)
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// isWrite reports whether a request of method changes something.
func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// cancelOnClose ends a request's context once its answer has been read.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// Config is a copy of cfg whose writes are fenced by f (WrapTransport).
func Config(cfg *rest.Config, f Fence, clk clock.PassiveClock) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Wrap(WrapTransport(f, clk))
	return out
}

// NewClient is a client like mgr's (its scheme and REST mapper, reads from
// its cache) whose writes go through cfg fenced by f: the client of a
// leader's writers.
func NewClient(mgr manager.Manager, cfg *rest.Config, f Fence, clk clock.PassiveClock) (client.Client, error) {
	c, err := client.New(Config(cfg, f, clk), client.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		Cache: &client.CacheOptions{Reader: mgr.GetCache()},
	})
	if err != nil {
		return nil, fmt.Errorf("fenced client: %w", err)
	}
	return c, nil
}
