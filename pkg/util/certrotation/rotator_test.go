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

package certrotation

import (
	"context"
	"crypto/x509"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

const day = 24 * time.Hour

var secretKey = types.NamespacedName{Namespace: "kq", Name: "webhook-cert"}

// served is what a rotator serves right now.
func served(t *testing.T, r *Rotator) *x509.Certificate {
	t.Helper()
	pair, err := r.GetCertificate(nil)
	if err != nil {
		t.Fatalf("GetCertificate: %v", err)
	}
	c, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// verify checks cert against the rotator's bundle for host at the fake time,
// as an API server calling the webhook would.
func verify(t *testing.T, r *Rotator, cert *x509.Certificate, host string, now time.Time) {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(r.Bundle()) {
		t.Fatal("bundle holds no certificate")
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: host, CurrentTime: now}); err != nil {
		t.Errorf("certificate %s does not verify for %s at %s: %v", cert.SerialNumber, host, now, err)
	}
}

func ensure(t *testing.T, r *Rotator) time.Duration {
	t.Helper()
	left, err := r.Ensure(context.Background())
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	return left
}

func secretVersion(t *testing.T, c client.Client) string {
	t.Helper()
	s := &corev1.Secret{}
	if err := c.Get(context.Background(), secretKey, s); err != nil {
		t.Fatal(err)
	}
	return s.ResourceVersion
}

// TestRotation walks certificates through their life on a fake clock: made
// when missing, shared by a second replica, the serving certificate renewed
// 30 days before its end, the CA 90 days before its own with the old CA kept
// in the bundle, and hosts added later covered.
func TestRotation(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(t0)
	c := fake.NewClientBuilder().Build()
	hosts := []string{"webhook.kq.svc", "127.0.0.1"}
	opts := DefaultOptions(secretKey, hosts)
	a := New(c, c, clk, opts)
	if a.Ready(nil) == nil {
		t.Fatal("ready before any certificate is loaded")
	}

	if left := ensure(t, a); left != 60*day {
		t.Errorf("first Ensure: next renewal in %s, want 60 days (90-day certificate renewed 30 days early)", left)
	}
	first := served(t, a)
	verify(t, a, first, "webhook.kq.svc", clk.Now())
	verify(t, a, first, "127.0.0.1", clk.Now())
	if a.Ready(nil) != nil {
		t.Error("not ready with a certificate loaded")
	}

	b := New(c, c, clk, opts)
	v := secretVersion(t, c)
	ensure(t, b)
	if got := served(t, b); !got.Equal(first) {
		t.Error("a second replica serves another certificate than the first")
	}
	if secretVersion(t, c) != v {
		t.Error("a second replica rewrote a Secret that was good")
	}

	clk.Step(59 * day)
	ensure(t, a)
	if !served(t, a).Equal(first) {
		t.Error("serving certificate renewed 31 days before its end, want 30")
	}
	clk.Step(2 * day)
	ensure(t, a)
	second := served(t, a)
	if second.Equal(first) {
		t.Fatal("serving certificate not renewed 29 days before its end")
	}
	verify(t, a, second, "webhook.kq.svc", clk.Now())
	ensure(t, b)
	if !served(t, b).Equal(second) {
		t.Error("the second replica did not load the renewed certificate")
	}

	// Renew the serving certificate every 60 days until the CA is within 90
	// days of its end (2 years).
	caEnd := t0.Add(-backdate).Add(2 * 365 * day)
	var cert *x509.Certificate
	for clk.Now().Before(caEnd.Add(-90 * day)) {
		clk.Step(ensure(t, a) + time.Minute)
		cert = served(t, a)
	}
	ensure(t, a)
	renewed := served(t, a)
	if renewed.Equal(cert) {
		t.Fatal("nothing renewed when the CA came within 90 days of its end")
	}
	if n := len(parse(map[string][]byte{CACertKey: a.Bundle()}).cas); n != 2 {
		t.Errorf("bundle holds %d CAs after the CA renewal, want the new and the old", n)
	}
	verify(t, a, renewed, "webhook.kq.svc", clk.Now())
	// A replica that has not reloaded yet still serves the old CA's
	// certificate: callers must keep trusting it.
	verify(t, a, cert, "webhook.kq.svc", clk.Now())
	if renewed.CheckSignatureFrom(parse(map[string][]byte{CACertKey: a.Bundle()}).cas[0]) != nil {
		t.Error("the renewed certificate is not signed by the new CA")
	}

	wider := New(c, c, clk, DefaultOptions(secretKey, append(hosts, "webhook.kq.svc.cluster.local")))
	ensure(t, wider)
	verify(t, wider, served(t, wider), "webhook.kq.svc.cluster.local", clk.Now())
}

// TestBrokenSecret: a Secret whose key was damaged, or that holds nothing
// (made empty by a chart), gets new certificates.
func TestBrokenSecret(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	empty := &corev1.Secret{}
	empty.Name, empty.Namespace = secretKey.Name, secretKey.Namespace
	c := fake.NewClientBuilder().WithObjects(empty).Build()
	r := New(c, c, clk, DefaultOptions(secretKey, []string{"webhook.kq.svc"}))
	ensure(t, r)
	first := served(t, r)
	verify(t, r, first, "webhook.kq.svc", clk.Now())

	s := &corev1.Secret{}
	if err := c.Get(context.Background(), secretKey, s); err != nil {
		t.Fatal(err)
	}
	s.Data[KeyKey] = []byte("not a key")
	if err := c.Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	ensure(t, r)
	if served(t, r).Equal(first) {
		t.Error("a damaged serving key was kept")
	}
	verify(t, r, served(t, r), "webhook.kq.svc", clk.Now())
}
