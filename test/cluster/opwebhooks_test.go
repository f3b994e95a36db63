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
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/utils/ptr"
)

// TestWebhooksServed: an operator whose webhook server listens but has not
// registered a webhook's handler yet (404, as the trainer controller right
// after its readiness probe passes) is not ready; once every path is served
// (here a refused review, 400) it is.
func TestWebhooksServed(t *testing.T) {
	var registered atomic.Bool
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "want a JSON POST", http.StatusMethodNotAllowed)
			return
		}
		if !registered.Load() || r.URL.Path == "/never" {
			http.NotFound(w, r)
			return
		}
		http.Error(w, "empty review", http.StatusBadRequest)
	}))
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	config := &admissionregistrationv1.ValidatingWebhookConfiguration{Webhooks: []admissionregistrationv1.ValidatingWebhook{
		{ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(srv.URL + "/validate-a"), CABundle: ca}},
		{ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(srv.URL + "/validate-b"), CABundle: ca}},
	}}
	endpoints := webhookEndpoints(config)
	if len(endpoints) != 2 || endpoints[1].url != srv.URL+"/validate-b" {
		t.Fatalf("webhookEndpoints = %+v, want the two URLs of the configuration", endpoints)
	}
	served := webhooksServed(endpoints)
	ctx := context.Background()
	ok, err := served(ctx)
	if ok || err == nil || !strings.Contains(err.Error(), "/validate-a is not served yet") {
		t.Fatalf("before the handlers are registered: served = %v, %v; want false naming /validate-a", ok, err)
	}
	registered.Store(true)
	if ok, err := served(ctx); !ok || err != nil {
		t.Fatalf("once registered: served = %v, %v; want true", ok, err)
	}
	never := webhooksServed(append(endpoints, webhookEndpoint{url: srv.URL + "/never", ca: ca}))
	if ok, err := never(ctx); ok || err == nil || !strings.Contains(err.Error(), "/never") {
		t.Fatalf("one path never served: served = %v, %v; want false naming /never", ok, err)
	}
	// A server whose certificate the CA did not sign is not served either.
	other := httptest.NewTLSServer(http.NotFoundHandler())
	defer other.Close()
	if ok, err := webhooksServed([]webhookEndpoint{{url: other.URL + "/x", ca: ca}})(ctx); ok || err == nil {
		t.Fatalf("untrusted certificate: served = %v, %v; want an error", ok, err)
	}
}
