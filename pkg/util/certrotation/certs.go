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
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"slices"
	"time"
)

// Keys of the Secret's data.
const (
	CACertKey = "ca.crt" // the CA bundle: the current CA first, then older CAs still valid
	CAKeyKey  = "ca.key" // the current CA's private key
	CertKey   = "tls.crt"
	KeyKey    = "tls.key"
)

// backdate makes new certificates valid a little before now, for clocks that
// lag.
const backdate = time.Hour

// material is what the Secret holds, parsed.
type material struct {
	cas             []*x509.Certificate // the bundle; cas[0] is the current CA
	caKey           crypto.Signer
	cert            *x509.Certificate
	certPEM, keyPEM []byte
}

// parse reads the Secret's data; anything missing or broken is left nil.
func parse(data map[string][]byte) material {
	var m material
	rest := data[CACertKey]
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if c, err := x509.ParseCertificate(b.Bytes); err == nil {
			m.cas = append(m.cas, c)
		}
	}
	m.caKey = parseKey(data[CAKeyKey])
	if b, _ := pem.Decode(data[CertKey]); b != nil {
		m.cert, _ = x509.ParseCertificate(b.Bytes)
	}
	m.certPEM, m.keyPEM = data[CertKey], data[KeyKey]
	return m
}

func parseKey(p []byte) crypto.Signer {
	b, _ := pem.Decode(p)
	if b == nil {
		return nil
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		return nil
	}
	s, _ := k.(crypto.Signer)
	return s
}

// caProblem says why the current CA cannot stay, or "" when it can.
func (m *material) caProblem(now time.Time, renewBefore time.Duration) string {
	switch {
	case len(m.cas) == 0 || m.caKey == nil:
		return "no CA"
	case !samePublicKey(m.cas[0].PublicKey, m.caKey.Public()):
		return "CA key does not match its certificate"
	case !m.cas[0].IsCA:
		return "CA certificate is not a CA"
	case now.After(m.cas[0].NotAfter.Add(-renewBefore)):
		return "CA expires soon"
	}
	return ""
}

// certProblem says why the serving certificate cannot stay, or "".
func (m *material) certProblem(now time.Time, renewBefore time.Duration, hosts []string) string {
	switch {
	case m.cert == nil || len(m.cas) == 0:
		return "no serving certificate"
	case m.cert.CheckSignatureFrom(m.cas[0]) != nil:
		return "serving certificate not signed by the current CA"
	case now.After(m.cert.NotAfter.Add(-renewBefore)):
		return "serving certificate expires soon"
	}
	for _, h := range hosts {
		if m.cert.VerifyHostname(h) != nil {
			return "serving certificate does not cover " + h
		}
	}
	if _, err := tlsPair(m.certPEM, m.keyPEM); err != nil {
		return "serving key does not match its certificate"
	}
	return ""
}

func samePublicKey(a, b crypto.PublicKey) bool {
	ka, errA := x509.MarshalPKIXPublicKey(a)
	kb, errB := x509.MarshalPKIXPublicKey(b)
	return errA == nil && errB == nil && bytes.Equal(ka, kb)
}

// newCA makes a CA valid from now for validity and puts it first in the
// bundle, keeping older CAs that are still valid (servers not yet renewed
// still present certificates they signed).
func (m *material) newCA(name string, now time.Time, validity time.Duration) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate CA key: %w", err)
	}
	tmpl, err := template(pkix.Name{CommonName: name}, now, validity)
	if err != nil {
		return err
	}
	tmpl.IsCA = true
	tmpl.BasicConstraintsValid = true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return fmt.Errorf("create CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return fmt.Errorf("parse CA certificate: %w", err)
	}
	kept := []*x509.Certificate{ca}
	for _, old := range m.cas {
		if old.IsCA && now.Before(old.NotAfter) {
			kept = append(kept, old)
		}
	}
	m.cas, m.caKey = kept, key
	return nil
}

// newCert makes a serving certificate for hosts signed by the current CA,
// valid for validity but never beyond the CA.
func (m *material) newCert(hosts []string, now time.Time, validity time.Duration) error {
	if len(hosts) == 0 {
		return errors.New("no host names for the serving certificate")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate serving key: %w", err)
	}
	tmpl, err := template(pkix.Name{CommonName: hosts[0]}, now, validity)
	if err != nil {
		return err
	}
	ca := m.cas[0]
	if tmpl.NotAfter.After(ca.NotAfter) {
		tmpl.NotAfter = ca.NotAfter
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), m.caKey)
	if err != nil {
		return fmt.Errorf("create serving certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("marshal serving key: %w", err)
	}
	m.cert, err = x509.ParseCertificate(der)
	if err != nil {
		return fmt.Errorf("parse serving certificate: %w", err)
	}
	m.certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	m.keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	return nil
}

func template(subject pkix.Name, now time.Time, validity time.Duration) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("serial number: %w", err)
	}
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      subject,
		NotBefore:    now.Add(-backdate),
		NotAfter:     now.Add(validity),
	}, nil
}

// data renders the material as the Secret's data.
func (m *material) data() (map[string][]byte, error) {
	keyDER, err := x509.MarshalPKCS8PrivateKey(m.caKey)
	if err != nil {
		return nil, fmt.Errorf("marshal CA key: %w", err)
	}
	return map[string][]byte{
		CACertKey: m.bundle(),
		CAKeyKey:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		CertKey:   slices.Clone(m.certPEM),
		KeyKey:    slices.Clone(m.keyPEM),
	}, nil
}

// bundle is the PEM of every CA, the current one first.
func (m *material) bundle() []byte {
	var out []byte
	for _, c := range m.cas {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
	}
	return out
}
