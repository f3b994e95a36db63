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

package v1alpha1

import (
	"net/url"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// The query parameters decode as k8s.io/apiserver decodes a GetterWithOptions'
// options: through the scheme, from url.Values.
func TestQueueUnitsOptionsFromQuery(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	codec := runtime.NewParameterCodec(scheme)
	cases := []struct {
		query   string
		want    QueueUnitsOptions
		wantErr string
	}{
		{query: "", want: QueueUnitsOptions{Limit: 1000, Phase: "Enqueued"}},
		{query: "limit=0&offset=3&phase=running&includeObject=Object", want: QueueUnitsOptions{Limit: 0, Offset: 3, Phase: "Running"}},
		{query: "limit=-1", wantErr: `limit must be a non-negative integer, got "-1"`},
		{query: "offset=x", wantErr: `offset must be a non-negative integer, got "x"`},
		{query: "phase=Pending", wantErr: `phase "Pending" is not supported: use one of Enqueued, Reserved, Dequeued, Running`},
	}
	for _, tc := range cases {
		q, err := url.ParseQuery(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		got := NewQueueUnitsOptions()
		err = codec.DecodeParameters(q, SchemeGroupVersion, got)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want %q", tc.query, err, tc.wantErr)
			}
			continue
		}
		if err != nil || *got != tc.want {
			t.Errorf("%q: %+v %v, want %+v", tc.query, *got, err, tc.want)
		}
	}
}
