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

package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/koordinator-sh/koord-queue/pkg/version"
)

func TestBuildInfo(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(NewBuildInfo(version.Info{Version: "v1.9.0", Revision: "abc", GoVersion: "go1.26.0"})); err != nil {
		t.Fatal(err)
	}
	want := `# HELP koord_queue_build_info Always 1; the labels name the running build (version, revision, Go version).
# TYPE koord_queue_build_info gauge
koord_queue_build_info{goversion="go1.26.0",revision="abc",version="v1.9.0"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), BuildInfoName); err != nil {
		t.Error(err)
	}
}

func TestRegisterBuildInfoTwice(t *testing.T) {
	reg := prometheus.NewRegistry()
	for i := range 2 {
		if err := RegisterBuildInfo(reg); err != nil {
			t.Fatalf("registration %d: %v", i+1, err)
		}
	}
	if n, err := testutil.GatherAndCount(reg, BuildInfoName); err != nil || n != 1 {
		t.Errorf("koord_queue_build_info series = %d (%v), want 1", n, err)
	}
}
