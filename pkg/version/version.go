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
