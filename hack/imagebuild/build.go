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

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// versionPkg receives the version and revision at link time.
const versionPkg = "github.com/koordinator-sh/koord-queue/pkg/version"

// platform is one GOOS/GOARCH pair an image is built for.
type platform struct{ OS, Arch string }

func (p platform) String() string { return p.OS + "/" + p.Arch }

func parsePlatform(s string) (platform, error) {
	os, arch, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok || os != "linux" || arch == "" || strings.Contains(arch, "/") {
		return platform{}, fmt.Errorf("platform %q: want linux/<arch>, such as linux/amd64", s)
	}
	return platform{OS: os, Arch: arch}, nil
}

// goBuild compiles the commands ./cmd/<name> of every binary for p into
// dir/<name>, static and without anything that differs from one build of the
// same source to the next.
func goBuild(ctx context.Context, root, dir string, p platform, binaries []string, version, revision string) error {
	ldflags := fmt.Sprintf("-s -w -buildid= -X %s.version=%s -X %s.revision=%s", versionPkg, version, versionPkg, revision)
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", dir + string(filepath.Separator)}
	for _, b := range binaries {
		args = append(args, "./cmd/"+b)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	// GOFLAGS from the caller could change the output (-race, -cover, tags):
	// it is replaced, and the microarchitecture levels are the defaults.
	cmd.Env = append(os.Environ(),
		"CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch, "GOFLAGS=-mod=readonly",
		"GOAMD64=v1", "GOARM64=v8.0", "GOEXPERIMENT=",
	)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build for %s: %w", p, err)
	}
	return nil
}
