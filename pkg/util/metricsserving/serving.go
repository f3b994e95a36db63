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
	"slices"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Options returns the metrics server options for bindAddress. With secure,
// the server speaks HTTPS (a self-signed certificate made at start, as
// controller-runtime does when no certificate folder is given) and every
// path but those in open needs a bearer token whose user may get that
// non-resource URL. Without secure it is plain HTTP open to anyone who can
// reach the port. handlers are served next to /metrics.
func Options(bindAddress string, secure bool, handlers map[string]http.Handler, open ...string) metricsserver.Options {
	o := metricsserver.Options{BindAddress: bindAddress, ExtraHandlers: handlers}
	if secure {
		o.SecureServing = true
		o.FilterProvider = exempt(filters.WithAuthenticationAndAuthorization, open)
	}
	return o
}

// exempt wraps provider so that requests for one of the open paths reach
// the handler without the filter.
func exempt(provider func(*rest.Config, *http.Client) (metricsserver.Filter, error), open []string) func(*rest.Config, *http.Client) (metricsserver.Filter, error) {
	return func(c *rest.Config, hc *http.Client) (metricsserver.Filter, error) {
		filter, err := provider(c, hc)
		if err != nil {
			return nil, err
		}
		return func(log logr.Logger, h http.Handler) (http.Handler, error) {
			guarded, err := filter(log, h)
			if err != nil {
				return nil, err
			}
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if slices.Contains(open, r.URL.Path) {
					h.ServeHTTP(w, r)
					return
				}
				guarded.ServeHTTP(w, r)
			}), nil
		}, nil
	}
}
