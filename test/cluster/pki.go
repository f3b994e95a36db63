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
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the set of files the control plane authenticates with. Everything is
// made with Go's crypto at every start; nothing is reused between clusters.
type pki struct {
	dir string
	// CA signs the API server's serving certificate.
	caCert, caKey string
	// serving certificate of kube-apiserver.
	servingCert, servingKey string
	// front-proxy CA and the API server's client certificate for aggregated
	// API servers (the visibility API).
	proxyCACert, proxyClientCert, proxyClientKey string
	// visibilityDir holds tls.crt and tls.key of the visibility API server,
	// signed by the CA for the name the aggregator checks.
	visibilityDir string
	// ServiceAccount token signing key pair.
	saKey, saPub string
	// tokens is kube-apiserver's --token-auth-file; token is the admin's.
	tokens, token string
}

const adminUser = "koord-queue-admin"

func newPKI(dir string) (*pki, error) {
	p := &pki{
		dir:             dir,
		caCert:          filepath.Join(dir, "ca.crt"),
		caKey:           filepath.Join(dir, "ca.key"),
		servingCert:     filepath.Join(dir, "apiserver.crt"),
		servingKey:      filepath.Join(dir, "apiserver.key"),
		proxyCACert:     filepath.Join(dir, "front-proxy-ca.crt"),
		proxyClientCert: filepath.Join(dir, "front-proxy-client.crt"),
		proxyClientKey:  filepath.Join(dir, "front-proxy-client.key"),
		visibilityDir:   filepath.Join(dir, "visibility"),
		saKey:           filepath.Join(dir, "sa.key"),
		saPub:           filepath.Join(dir, "sa.pub"),
		tokens:          filepath.Join(dir, "tokens.csv"),
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca, caKey, err := selfSignedCA("koord-queue-local-ca")
	if err != nil {
		return nil, err
	}
	if err := writeCert(p.caCert, ca); err != nil {
		return nil, err
	}
	if err := writeKey(p.caKey, caKey); err != nil {
		return nil, err
	}
	serving := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(serviceIP)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if err := p.issue(serving, ca, caKey, p.servingCert, p.servingKey); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(p.visibilityDir, 0o700); err != nil {
		return nil, err
	}
	visibility := &x509.Certificate{
		Subject:     pkix.Name{CommonName: visibilityService},
		DNSNames:    []string{visibilityService + "." + visibilityNamespace + ".svc", "localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if err := p.issue(visibility, ca, caKey, filepath.Join(p.visibilityDir, "tls.crt"), filepath.Join(p.visibilityDir, "tls.key")); err != nil {
		return nil, err
	}
	proxyCA, proxyKey, err := selfSignedCA("koord-queue-local-front-proxy-ca")
	if err != nil {
		return nil, err
	}
	if err := writeCert(p.proxyCACert, proxyCA); err != nil {
		return nil, err
	}
	proxyClient := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "front-proxy-client"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if err := p.issue(proxyClient, proxyCA, proxyKey, p.proxyClientCert, p.proxyClientKey); err != nil {
		return nil, err
	}
	sa, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("service account key: %w", err)
	}
	if err := writeKey(p.saKey, sa); err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.saPub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600); err != nil {
		return nil, err
	}
	p.token = rand.Text()
	line := fmt.Sprintf("%s,%s,%s,\"system:masters\"\n", p.token, adminUser, adminUser)
	if err := os.WriteFile(p.tokens, []byte(line), 0o600); err != nil {
		return nil, err
	}
	return p, nil
}

// addUser gives name a token of its own in system:masters (before
// kube-apiserver starts) and returns the token.
func (p *pki) addUser(name string) (string, error) {
	token := rand.Text()
	f, err := os.OpenFile(p.tokens, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "%s,%s,%s,\"system:masters\"\n", token, name, name)
	return token, err
}

func selfSignedCA(name string) (*x509.Certificate, crypto.Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("ca key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, fmt.Errorf("ca certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func (p *pki) issue(tmpl, ca *x509.Certificate, caKey crypto.Signer, certPath, keyPath string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("key for %s: %w", tmpl.Subject.CommonName, err)
	}
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().AddDate(1, 0, 0)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return fmt.Errorf("certificate for %s: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return err
	}
	if err := writeCert(certPath, cert); err != nil {
		return err
	}
	return writeKey(keyPath, key)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

func writeCert(path string, cert *x509.Certificate) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), 0o600)
}

func writeKey(path string, key crypto.Signer) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("marshal key %s: %w", path, err)
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
}
