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

package metricsserving

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// refuseAll stands in for the authenticating filter: it answers 401 to all.
func refuseAll(*rest.Config, *http.Client) (metricsserver.Filter, error) {
	return func(_ logr.Logger, _ http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
		}), nil
	}, nil
}

func TestExemptLetsOnlyOpenPathsThrough(t *testing.T) {
	filter, err := exempt(refuseAll, []string{"/healthz", "/readyz"})(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	h, err := filter(logr.Discard(), ok)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{
		"/healthz": http.StatusOK, "/readyz": http.StatusOK,
		"/metrics": http.StatusUnauthorized, "/debug/pprof/": http.StatusUnauthorized, "/healthz/ping": http.StatusUnauthorized,
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != want {
			t.Errorf("GET %s: %d, want %d", path, rec.Code, want)
		}
	}
}

func TestOptions(t *testing.T) {
	o := Options(":1", false, nil)
	if o.SecureServing || o.FilterProvider != nil {
		t.Errorf("plain HTTP opt-in: SecureServing=%v filter=%v", o.SecureServing, o.FilterProvider != nil)
	}
	o = Options(":1", true, nil, "/healthz")
	if !o.SecureServing || o.FilterProvider == nil || o.CertDir != "" {
		t.Errorf("secure: SecureServing=%v filter=%v certDir=%q", o.SecureServing, o.FilterProvider != nil, o.CertDir)
	}
}
