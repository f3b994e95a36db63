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
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// An operator's webhooks, served on 127.0.0.1 with a certificate made here.
//
// The jobset, lws and trainer controllers register their webhook handlers in
// a goroutine of their own, after their readiness probe may already pass (it
// checks that the webhook server listens, not what it serves). Until then a
// webhook's path answers 404 and the API server refuses every create it
// guards, so an operator is ready only once each of its webhooks' paths is
// served.

// webhookEndpoint is one webhook URL of an operator and the CA bundle that
// signed the certificate it serves.
type webhookEndpoint struct {
	url string
	ca  []byte
}

// webhookServingCert makes a CA and, in certDir (tls.crt, tls.key), a
// serving certificate for an operator's webhook on 127.0.0.1; it returns
// the CA bundle its webhook configurations name.
func webhookServingCert(operator, certDir string) ([]byte, error) {
	ca, caKey, err := selfSignedCA(operator + "-webhook-ca")
	if err != nil {
		return nil, err
	}
	serving := &x509.Certificate{
		Subject:     pkix.Name{CommonName: operator + "-webhook"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if err := (&pki{}).issue(serving, ca, caKey, filepath.Join(certDir, "tls.crt"), filepath.Join(certDir, "tls.key")); err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}), nil
}

// replaceWebhookConfigs creates webhook configurations for op and remembers
// their URLs, which startOperator waits on. One left by an earlier start
// names an older certificate: it is replaced.
func (c *Cluster) replaceWebhookConfigs(ctx context.Context, op Operator, objs ...client.Object) error {
	var endpoints []webhookEndpoint
	for _, o := range objs {
		err := c.Client.Create(ctx, o)
		if apierrors.IsAlreadyExists(err) {
			if err = c.Client.Delete(ctx, o); err == nil {
				err = c.Client.Create(ctx, o)
			}
		}
		if err != nil {
			return fmt.Errorf("register %T %s for %s: %w", o, o.GetName(), op, err)
		}
		endpoints = append(endpoints, webhookEndpoints(o)...)
	}
	if c.operatorWebhooks == nil {
		c.operatorWebhooks = map[Operator][]webhookEndpoint{}
	}
	c.operatorWebhooks[op] = endpoints
	return nil
}

// webhookEndpoints lists the URLs a webhook configuration calls.
func webhookEndpoints(o client.Object) []webhookEndpoint {
	var configs []admissionregistrationv1.WebhookClientConfig
	switch w := o.(type) {
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		for _, h := range w.Webhooks {
			configs = append(configs, h.ClientConfig)
		}
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		for _, h := range w.Webhooks {
			configs = append(configs, h.ClientConfig)
		}
	}
	var out []webhookEndpoint
	for _, cc := range configs {
		if cc.URL != nil {
			out = append(out, webhookEndpoint{url: *cc.URL, ca: cc.CABundle})
		}
	}
	return out
}

// webhooksServed is a poll condition: every endpoint answers an (empty)
// admission review with anything but 404, that is, its handler is
// registered. The review itself is refused; only the path matters.
func webhooksServed(endpoints []webhookEndpoint) func(context.Context) (bool, error) {
	clients := make([]*http.Client, len(endpoints))
	for i, e := range endpoints {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(e.ca)
		clients[i] = &http.Client{
			Timeout:   2 * time.Second,
			Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
		}
	}
	return func(ctx context.Context) (bool, error) {
		for i, e := range endpoints {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader([]byte("{}")))
			if err != nil {
				return false, err
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := clients[i].Do(req)
			if err != nil {
				return false, err
			}
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusNotFound {
				return false, fmt.Errorf("%s is not served yet (%s)", e.url, resp.Status)
			}
		}
		return true, nil
	}
}
