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

package framework

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Option changes how Start brings the control plane up.
type Option func(*startConfig)

type startConfig struct {
	aggregator bool
	// maxInflight and maxMutatingInflight override the API server's
	// in-flight limits when set (WithInflightLimits).
	maxInflight, maxMutatingInflight int
}

// WithAggregator configures kube-apiserver's aggregation layer the way a real
// cluster does: a front-proxy CA (written to a temporary folder, made in Go),
// the proxy client certificate kube-apiserver presents to extension API
// servers, and the request-header flags it publishes in
// kube-system/extension-apiserver-authentication. Aggregator routing stays
// off, so an APIService can point at a Service of type ExternalName (say
// localhost): the service resolver then dials the external name and the
// APIService's port, which is how an in-process extension server on loopback
// is reached without kube-proxy.
func WithAggregator() Option {
	return func(c *startConfig) { c.aggregator = true }
}

// FrontProxyClientName is the common name of the proxy client certificate.
const FrontProxyClientName = "front-proxy-client"

// configureAggregator writes the front-proxy CA and client pair in dir and
// sets the API server's flags.
func configureAggregator(api *envtest.APIServer, dir string) error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "front-proxy-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true, IsCA: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("front-proxy CA: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: FrontProxyClientName},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("proxy client certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"front-proxy-ca.crt":     pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		"front-proxy-client.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"front-proxy-client.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	api.Configure().
		Set("requestheader-client-ca-file", filepath.Join(dir, "front-proxy-ca.crt")).
		Set("requestheader-allowed-names", FrontProxyClientName).
		Set("requestheader-username-headers", "X-Remote-User").
		Set("requestheader-group-headers", "X-Remote-Group").
		Set("requestheader-extra-headers-prefix", "X-Remote-Extra-").
		Set("proxy-client-cert-file", filepath.Join(dir, "front-proxy-client.crt")).
		Set("proxy-client-key-file", filepath.Join(dir, "front-proxy-client.key")).
		Set("enable-aggregator-routing", "false")
	return nil
}
