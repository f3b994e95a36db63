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

package version

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResolve(t *testing.T) {
	stamped := &debug.BuildInfo{
		Main:     debug.Module{Path: "github.com/koordinator-sh/koord-queue", Version: "v0.0.0-20261129125514-4b09144320df+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "4b09144320df"}},
	}
	tests := []struct {
		name              string
		linked, linkedRev string
		bi                *debug.BuildInfo
		want              Info
	}{
		{name: "linker values win", linked: "v1.9.0", linkedRev: "abc", bi: stamped,
			want: Info{Version: "v1.9.0", Revision: "abc"}},
		{name: "toolchain stamp", bi: stamped,
			want: Info{Version: "v0.0.0-20261129125514-4b09144320df+dirty", Revision: "4b09144320df"}},
		{name: "devel build without VCS", bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			want: Info{Version: DefaultVersion, Revision: DefaultRevision}},
		{name: "no build information",
			want: Info{Version: DefaultVersion, Revision: DefaultRevision}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.want.GoVersion = runtime.Version()
			if diff := cmp.Diff(tc.want, resolve(tc.linked, tc.linkedRev, tc.bi)); diff != "" {
				t.Errorf("resolve (-want +got):\n%s", diff)
			}
		})
	}
}

func TestString(t *testing.T) {
	got := Info{Version: "v1.9.0", Revision: "abc", GoVersion: "go1.26.0"}.String()
	if want := "version v1.9.0, revision abc, go1.26.0"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
