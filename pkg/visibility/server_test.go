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
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	certutil "k8s.io/client-go/util/cert"

	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
)

// writeCert writes a new self-signed pair for cn into dir as tls.crt and
// tls.key, and returns the certificate's DER bytes.
func writeCert(t *testing.T, dir, cn string) []byte {
	t.Helper()
	crt, key, err := certutil.GenerateSelfSignedCertKey(cn, []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Both files are swapped in by rename, as a Secret volume does.
	for name, data := range map[string][]byte{"tls.key": key, "tls.crt": crt} {
		tmp := filepath.Join(dir, "."+name)
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	block, _ := pem.Decode(crt)
	return block.Bytes
}

// authConfigMap is what kube-apiserver publishes for extension API servers.
func authConfigMap(t *testing.T) *corev1.ConfigMap {
	t.Helper()
	ca, _, err := certutil.GenerateSelfSignedCertKey("test-ca", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: authConfigMapName, Namespace: authConfigMapNamespace},
		Data: map[string]string{
			"client-ca-file": string(ca), "requestheader-client-ca-file": string(ca),
			"requestheader-username-headers": `["X-Remote-User"]`, "requestheader-group-headers": `["X-Remote-Group"]`,
			"requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`, "requestheader-allowed-names": `["front-proxy-client"]`,
		},
	}
}

// presented is the certificate the server shows in a TLS handshake.
func presented(addr string) ([]byte, error) {
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only the certificate is read
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	return conn.ConnectionState().PeerCertificates[0].Raw, nil
}

func TestServingCertificateIsReloaded(t *testing.T) {
	dir := t.TempDir()
	first := writeCert(t, dir, "first")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(Options{CertDir: dir, Listener: ln}, newFakeSource(), fake.NewClientset(authConfigMap(t)))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := srv.Start(ctx); err != nil {
			t.Error(err)
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })

	var got []byte
	poll := func(want []byte) error {
		return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			got, err = presented(ln.Addr().String())
			return err == nil && bytes.Equal(got, want), nil
		})
	}
	if err := poll(first); err != nil {
		t.Fatalf("the first certificate is not served: %v", err)
	}
	second := writeCert(t, dir, "second")
	if err := poll(second); err != nil {
		t.Fatalf("the rewritten certificate is not served: %v", err)
	}
}

// blockingSource holds every read of the quotas until release is closed.
type blockingSource struct {
	*fakeSource
	entered chan struct{}
	release chan struct{}
}

func (b *blockingSource) Quotas(ctx context.Context) ([]visibilityv1alpha1.Quota, error) {
	b.entered <- struct{}{}
	<-b.release
	return b.fakeSource.Quotas(ctx)
}

// TestMaxInFlight: without API Priority and Fairness, the requests beyond
// the bound are refused with 429 and Retry-After, as kube-apiserver does.
func TestMaxInFlight(t *testing.T) {
	src := &blockingSource{fakeSource: newFakeSource(), entered: make(chan struct{}), release: make(chan struct{})}
	h := newHandler(t, src, func(o *handlerOptions) { o.maxInFlight = 1 })
	do := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		do(base + "/quotas")
	}()
	<-src.entered // the one slot is taken
	if rec := do(base + "/quotas"); rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" {
		t.Errorf("second request at once: %d, Retry-After %q; want 429 with Retry-After 1", rec.Code, rec.Header().Get("Retry-After"))
	}
	close(src.release)
	<-done
	go func() { <-src.entered }()
	if rec := do(base + "/quotas"); rec.Code != http.StatusOK {
		t.Errorf("once the slot is free: %d", rec.Code)
	}
}
