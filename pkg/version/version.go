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
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set by the linker (-X); see the package documentation.
var (
	version  string
	revision string
)

// Defaults when neither the linker nor the toolchain's build information
// says anything.
const (
	DefaultVersion  = "devel"
	DefaultRevision = "unknown"
)

// Info describes one build.
type Info struct {
	// Version is a release tag such as v1.9.0, or what git describe says
	// between releases (v1.9.0-3-gabcdef0, with -dirty for local changes).
	Version string
	// Revision is the full commit hash.
	Revision string
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string
}

// String is the line --version prints.
func (i Info) String() string {
	return fmt.Sprintf("version %s, revision %s, %s", i.Version, i.Revision, i.GoVersion)
}

// Get returns the build of the running binary.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(version, revision, bi)
}

// resolve prefers the linker's values, then the toolchain's build
// information, then the defaults.
func resolve(linkedVersion, linkedRevision string, bi *debug.BuildInfo) Info {
	info := Info{Version: linkedVersion, Revision: linkedRevision, GoVersion: runtime.Version()}
	if bi != nil {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		if info.Revision == "" {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					info.Revision = s.Value
				}
			}
		}
	}
	if info.Version == "" {
		info.Version = DefaultVersion
	}
	if info.Revision == "" {
		info.Revision = DefaultRevision
	}
	return info
}
