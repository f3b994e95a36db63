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
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Options say what to keep and how long it lasts.
type Options struct {
	// Secret holds the CA and the serving certificate.
	Secret types.NamespacedName
	// Hosts are the DNS names and IP addresses the serving certificate
	// covers; the first is its common name.
	Hosts []string
	// CAName is the CA's common name.
	CAName string
	// CAValidity and CertValidity are how long new certificates last.
	CAValidity, CertValidity time.Duration
	// CARenewBefore and CertRenewBefore: a certificate with less time left
	// is renewed.
	CARenewBefore, CertRenewBefore time.Duration
}

// DefaultOptions: a CA for two years renewed 90 days before its end, serving
// certificates for 90 days renewed 30 days before theirs.
func DefaultOptions(secret types.NamespacedName, hosts []string) Options {
	return Options{
		Secret:          secret,
		Hosts:           hosts,
		CAName:          "koord-queue-webhook-ca",
		CAValidity:      2 * 365 * 24 * time.Hour,
		CARenewBefore:   90 * 24 * time.Hour,
		CertValidity:    90 * 24 * time.Hour,
		CertRenewBefore: 30 * 24 * time.Hour,
	}
}

// Rotator keeps the Secret's certificates usable and serves the loaded one.
// It owns the Secret's data and the in-memory certificate and bundle.
type Rotator struct {
	client client.Client
	reader client.Reader
	clock  clock.PassiveClock
	opts   Options

	mu     sync.RWMutex
	cert   *tls.Certificate
	bundle []byte
}

// New builds a rotator; reader should not be a cache (the Secret is read
// by name, without a cluster-wide watch of Secrets).
func New(c client.Client, reader client.Reader, clk clock.PassiveClock, opts Options) *Rotator {
	return &Rotator{client: c, reader: reader, clock: clk, opts: opts}
}

// GetCertificate serves the loaded certificate, for tls.Config.
func (r *Rotator) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.cert == nil {
		return nil, errors.New("webhook serving certificate not loaded yet")
	}
	return r.cert, nil
}

// Bundle is the PEM of the CAs that callers should trust; nil until loaded.
func (r *Rotator) Bundle() []byte {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.bundle
}

// Ready is a readiness check: a certificate is loaded.
func (r *Rotator) Ready(*http.Request) error {
	_, err := r.GetCertificate(nil)
	return err
}

// Ensure makes the Secret hold a CA and a serving certificate good for a
// while yet, renewing what is missing, broken or about to expire, and loads
// them. It returns how long until something needs renewing. Another replica
// writing the Secret at the same time makes it return a conflict error: call
// again.
func (r *Rotator) Ensure(ctx context.Context) (time.Duration, error) {
	log := ctrl.LoggerFrom(ctx).WithValues("secret", klog.KRef(r.opts.Secret.Namespace, r.opts.Secret.Name))
	now := r.clock.Now()
	secret := &corev1.Secret{}
	err := r.reader.Get(ctx, r.opts.Secret, secret)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return 0, fmt.Errorf("get secret: %w", err)
	}
	m := parse(secret.Data)
	renewed := false
	if why := m.caProblem(now, r.opts.CARenewBefore); why != "" {
		log.Info("Making a new webhook CA", "reason", why)
		if err := m.newCA(r.opts.CAName, now, r.opts.CAValidity); err != nil {
			return 0, err
		}
		renewed = true
	}
	if why := m.certProblem(now, r.opts.CertRenewBefore, r.opts.Hosts); why != "" {
		log.Info("Making a new webhook serving certificate", "reason", why)
		if err := m.newCert(r.opts.Hosts, now, r.opts.CertValidity); err != nil {
			return 0, err
		}
		renewed = true
	}
	if renewed {
		if err := r.write(ctx, secret, exists, &m); err != nil {
			return 0, err
		}
	}
	pair, err := tlsPair(m.certPEM, m.keyPEM)
	if err != nil {
		return 0, fmt.Errorf("load serving certificate: %w", err)
	}
	r.mu.Lock()
	r.cert, r.bundle = pair, m.bundle()
	r.mu.Unlock()
	left := min(m.cas[0].NotAfter.Add(-r.opts.CARenewBefore).Sub(now), m.cert.NotAfter.Add(-r.opts.CertRenewBefore).Sub(now))
	return max(left, 0), nil
}

func (r *Rotator) write(ctx context.Context, secret *corev1.Secret, exists bool, m *material) error {
	data, err := m.data()
	if err != nil {
		return err
	}
	secret.Data = data
	if !exists {
		secret.Name, secret.Namespace = r.opts.Secret.Name, r.opts.Secret.Namespace
		secret.Type = corev1.SecretTypeOpaque
		if err := r.client.Create(ctx, secret); err != nil {
			return fmt.Errorf("create secret: %w", err)
		}
		return nil
	}
	// Update carries the resourceVersion read: a replica that wrote first wins.
	if err := r.client.Update(ctx, secret); err != nil {
		return fmt.Errorf("update secret: %w", err)
	}
	return nil
}

func tlsPair(certPEM, keyPEM []byte) (*tls.Certificate, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	return &pair, nil
}
