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

package app

import "testing"

func TestAdmissionWindow(t *testing.T) {
	for _, tc := range []struct {
		name          string
		flag, workers int
		qps           float32
		want          int
	}{
		{name: "one second of the default client", qps: 100, workers: 8, want: 100},
		{name: "at least one per status worker", qps: 5, workers: 8, want: 8},
		{name: "set by hand", flag: 3, qps: 100, workers: 8, want: 3},
		{name: "negative: no bound", flag: -1, qps: 100, workers: 8, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			o.AdmissionWindow, o.QPS, o.StatusWorkers = tc.flag, tc.qps, tc.workers
			if got := o.admissionWindow(); got != tc.want {
				t.Errorf("admission window %d, want %d", got, tc.want)
			}
		})
	}
}

func TestVisibilityUINeedsTheServer(t *testing.T) {
	o := NewOptions()
	o.VisibilityUI = true
	if err := o.Complete(); err == nil || err.Error() != "--visibility-ui needs --enableVisibilityServer: the web view is served by the visibility API server" {
		t.Errorf("--visibility-ui alone: %v", err)
	}
	o.EnableVisibilityServer, o.VisibilityBindAddress = true, ":8443"
	if err := o.Complete(); err != nil {
		t.Errorf("--visibility-ui with the server: %v", err)
	}
}
