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
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// leader is a Lock that acquired its lease at t0 and may write for 10 s.
func leader(t *testing.T) (*Lock, *clocktesting.FakePassiveClock) {
	t.Helper()
	clk := clocktesting.NewFakePassiveClock(t0)
	l := New(&memLock{id: "a"}, 10*time.Second, clk)
	if err := l.Create(context.Background(), record("a")); err != nil {
		t.Fatal(err)
	}
	return l, clk
}

// apiServer counts the requests that reach it, by method; answer, when set,
// answers each in its place.
type apiServer struct {
	mu     sync.Mutex
	got    map[string]int
	query  []string
	answer func(w http.ResponseWriter, r *http.Request) bool
}

func (s *apiServer) start(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		if s.got == nil {
			s.got = map[string]int{}
		}
		s.got[r.Method]++
		s.query = append(s.query, r.URL.RawQuery)
		answer := s.answer
		s.mu.Unlock()
		if answer != nil && answer(w, r) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default"}}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (s *apiServer) count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got[method]
}

// heldLimiter is client-go's rate limiter holding each request until let
// go; entered tells that a request waits in it.
type heldLimiter struct {
	entered chan struct{}
	release chan struct{}
}

func (h *heldLimiter) Wait(ctx context.Context) error {
	h.entered <- struct{}{}
	select {
	case <-h.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
func (h *heldLimiter) TryAccept() bool { return true }
func (h *heldLimiter) Accept()         {}
func (h *heldLimiter) Stop()           {}
func (h *heldLimiter) QPS() float32    { return 1 }

var _ flowcontrol.RateLimiter = (*heldLimiter)(nil)

func clientset(t *testing.T, host string, l *Lock, clk *clocktesting.FakePassiveClock, limiter flowcontrol.RateLimiter) kubernetes.Interface {
	t.Helper()
	cfg := Config(&rest.Config{Host: host, RateLimiter: limiter}, l, clk)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func configMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "default"}}
}

// A write checked while the lease was fresh, then held by client-go's rate
// limiter (--qps=1 and eight workers) until past the fence, never reaches
// the API server.
func TestAWriteHeldByTheRateLimiterPastTheFenceIsNotSent(t *testing.T) {
	l, clk := leader(t)
	srv := &apiServer{}
	limiter := &heldLimiter{entered: make(chan struct{}, 4), release: make(chan struct{})}
	cs := clientset(t, srv.start(t).URL, l, clk, limiter)

	clk.SetTime(t0.Add(9900 * time.Millisecond))
	if !l.Allowed() {
		t.Fatal("the fence is closed 9.9 s into a 10 s lease")
	}
	errs := make(chan error, 1)
	go func() {
		_, err := cs.CoreV1().ConfigMaps("default").Create(context.Background(), configMap(), metav1.CreateOptions{})
		errs <- err
	}()
	<-limiter.entered
	clk.SetTime(t0.Add(10100 * time.Millisecond))
	close(limiter.release)
	err := <-errs
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("write past the fence: got %v, want ErrFenced", err)
	}
	if n := srv.count(http.MethodPost); n != 0 {
		t.Fatalf("%d write(s) reached the API server after the fence", n)
	}
	// Reads are not fenced.
	if _, err := cs.CoreV1().ConfigMaps("default").Get(context.Background(), "x", metav1.GetOptions{}); err != nil {
		t.Fatalf("read after the fence: %v", err)
	}
}

// client-go retries a write the API server asked to be made again
// (Retry-After); the retry is fenced too.
func TestEveryRetryIsFenced(t *testing.T) {
	l, clk := leader(t)
	srv := &apiServer{}
	srv.answer = func(w http.ResponseWriter, _ *http.Request) bool {
		// The first attempt is answered late: the lease may be lost by now.
		clk.SetTime(t0.Add(11 * time.Second))
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusTooManyRequests)
		return true
	}
	cs := clientset(t, srv.start(t).URL, l, clk, flowcontrol.NewFakeAlwaysRateLimiter())
	_, err := cs.CoreV1().ConfigMaps("default").Create(context.Background(), configMap(), metav1.CreateOptions{})
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("retry past the fence: got %v, want ErrFenced", err)
	}
	if n := srv.count(http.MethodPost); n != 1 {
		t.Fatalf("%d attempts reached the API server, want the first only", n)
	}
}

// A write that leaves in time carries the fence's end as its deadline, to
// the client and to the API server.
func TestAWriteCarriesTheFenceAsItsDeadline(t *testing.T) {
	l, clk := leader(t)
	clk.SetTime(t0.Add(7 * time.Second))
	var deadline time.Time
	var query string
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		deadline, _ = r.Context().Deadline()
		query = r.URL.RawQuery
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	})
	rt := WrapTransport(l, clk)(next)
	for _, tc := range []struct {
		url, want string
	}{
		{url: "http://api/apis/x", want: "timeout=3s"},
		{url: "http://api/apis/x?timeout=1s", want: "timeout=1s"},
		{url: "http://api/apis/x?timeout=30s", want: "timeout=3s"},
	} {
		req, err := http.NewRequest(http.MethodPatch, tc.url, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		end := time.Now()
		_ = resp.Body.Close()
		if query != tc.want {
			t.Errorf("%s: query %q, want %q", tc.url, query, tc.want)
		}
		// 3 s were left on the fence's clock.
		if deadline.Before(start.Add(3*time.Second)) || deadline.After(end.Add(3*time.Second)) {
			t.Errorf("%s: deadline %s after the call began, want the 3 s left", tc.url, deadline.Sub(start))
		}
	}
}

// A stopping leader cancels its callers' contexts: a write already on the
// wire still runs to its answer (the lease is released after it), while a
// write not yet sent stays unsent.
func TestAWriteOnTheWireOutlivesItsCallersCancel(t *testing.T) {
	l, clk := leader(t)
	onWire := make(chan struct{})
	finish := make(chan struct{})
	var cutShort error
	rt := WrapTransport(l, clk)(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		close(onWire)
		select {
		case <-finish:
		case <-r.Context().Done():
			cutShort = r.Context().Err()
		}
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	}))
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, "http://api/x", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := rt.RoundTrip(req)
		if err == nil {
			err = resp.Body.Close()
		}
		done <- err
	}()
	<-onWire
	cancel()
	close(finish)
	if err := <-done; err != nil || cutShort != nil {
		t.Fatalf("write on the wire when its caller stopped: err %v, its context ended with %v; want it answered", err, cutShort)
	}

	// A write whose caller has already stopped is not sent at all.
	srv := &apiServer{}
	c, err := kubernetes.NewForConfig(Config(&rest.Config{Host: srv.start(t).URL}, l, clk))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); err == nil {
		t.Fatal("a write whose caller had stopped succeeded")
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if n := srv.got[http.MethodPost]; n != 0 {
		t.Fatalf("%d writes sent after their caller stopped", n)
	}
}

// A replica that holds no lease, or released it, sends no write.
func TestNoWritesWithoutTheLease(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(t0)
	l := New(&memLock{id: "a"}, 10*time.Second, clk)
	sent := 0
	rt := WrapTransport(l, clk)(roundTripFunc(func(*http.Request) (*http.Response, error) {
		sent++
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	}))
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		req, err := http.NewRequest(method, "http://api/x", http.NoBody)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rt.RoundTrip(req); !errors.Is(err, ErrFenced) {
			t.Errorf("%s without a lease: got %v, want ErrFenced", method, err)
		}
	}
	if sent != 0 {
		t.Fatalf("%d writes sent without a lease", sent)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// The leaders write through controller-runtime's client: the refusal keeps
// its identity through it (the status writer waits for a renewal on it).
func TestControllerRuntimeClientKeepsErrFenced(t *testing.T) {
	l, clk := leader(t)
	srv := &apiServer{}
	host := srv.start(t).URL
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	c, err := client.New(Config(&rest.Config{Host: host}, l, clk), client.Options{Scheme: clientgoscheme.Scheme, Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	cm := configMap()
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"data":{"k":"v"}}`))
	if err := c.Patch(context.Background(), cm, patch); err != nil {
		t.Fatalf("patch within the fence: %v", err)
	}
	clk.SetTime(t0.Add(10 * time.Second))
	if err := c.Patch(context.Background(), cm, patch); !errors.Is(err, ErrFenced) {
		t.Fatalf("patch at the fence's end: got %v, want ErrFenced", err)
	}
	if n := srv.count(http.MethodPatch); n != 1 {
		t.Fatalf("%d patches reached the API server, want the one within the fence", n)
	}
}
