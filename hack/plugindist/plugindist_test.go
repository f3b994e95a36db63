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
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

const templatePath = "../../plugins/koord-queue.yaml.tmpl"

// manifest is the part of a krew manifest the tests read.
type manifest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version   string `json:"version"`
		Platforms []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			SHA256 string `json:"sha256"`
			Bin    string `json:"bin"`
			Files  []struct {
				From string `json:"from"`
				To   string `json:"to"`
			} `json:"files"`
		} `json:"platforms"`
	} `json:"spec"`
}

func readManifest(t *testing.T, dir string) manifest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "koord-queue.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := yaml.UnmarshalStrict(raw, &m, yaml.DisallowUnknownFields); err != nil {
		// Fields the test does not read (homepage, description) are fine.
		if err := yaml.Unmarshal(raw, &m); err != nil {
			t.Fatalf("manifest is not YAML: %v\n%s", err, raw)
		}
	}
	return m
}

func sha(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// TestManifestListsEveryPlatform renders the manifest over fake archives:
// the six platforms, each with its archive's URL and sha256, and
// checksums.txt agreeing.
func TestManifestListsEveryPlatform(t *testing.T) {
	dir := t.TempDir()
	platforms, err := parsePlatforms(defaultPlatforms)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, p := range platforms {
		data := []byte("archive of " + p.String())
		if err := os.WriteFile(filepath.Join(dir, p.archive()), data, 0o644); err != nil {
			t.Fatal(err)
		}
		want[p.String()] = sha(data)
	}
	if err := writeRelease(dir, templatePath, "v1.9.0", platforms); err != nil {
		t.Fatal(err)
	}
	m := readManifest(t, dir)
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" || m.Metadata.Name != "koord-queue" || m.Spec.Version != "v1.9.0" {
		t.Errorf("manifest head: %s %s %s %s", m.APIVersion, m.Kind, m.Metadata.Name, m.Spec.Version)
	}
	got := map[string]string{}
	for _, p := range m.Spec.Platforms {
		osName, arch := p.Selector.MatchLabels["os"], p.Selector.MatchLabels["arch"]
		key := osName + "/" + arch
		got[key] = p.SHA256
		pl := platform{OS: osName, Arch: arch}
		if wantURI := "https://github.com/koordinator-sh/koord-queue/releases/download/v1.9.0/" + pl.archive(); p.URI != wantURI {
			t.Errorf("%s: uri %s, want %s", key, p.URI, wantURI)
		}
		if p.Bin != pl.binary() || len(p.Files) != 2 || p.Files[0].From != pl.binary() {
			t.Errorf("%s: bin %s, files %+v", key, p.Bin, p.Files)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("platforms and sha256 (-want +got):\n%s", diff)
	}
	sums, err := os.ReadFile(filepath.Join(dir, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range platforms {
		if line := want[p.String()] + "  " + p.archive(); !slices.Contains(strings.Split(string(sums), "\n"), line) {
			t.Errorf("checksums.txt lacks %q:\n%s", line, sums)
		}
	}
}

// TestBuildOnePlatform builds the archive of the machine's own platform,
// with a small stand-in for the plugin (testdata/fakeplugin; the real one
// takes minutes to cross-compile on a cold cache): it holds the binary, which
// reports the version given, and the manifest's sha256 is the archive's.
func TestBuildOnePlatform(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("reads a tar.gz")
	}
	p := platform{OS: runtime.GOOS, Arch: runtime.GOARCH}
	o := &options{root: "../..", pkg: "./hack/plugindist/testdata/fakeplugin", output: t.TempDir(), template: templatePath, version: "v0.0.0-plugindist",
		revision: "abc", platforms: []platform{p}, sourceDate: time.Unix(1700000000, 0).UTC()}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := run(ctx, o); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(o.output, p.archive()))
	if err != nil {
		t.Fatal(err)
	}
	m := readManifest(t, o.output)
	if len(m.Spec.Platforms) != 1 || m.Spec.Platforms[0].SHA256 != sha(data) {
		t.Fatalf("manifest platforms %+v, archive sha256 %s", m.Spec.Platforms, sha(data))
	}
	bin := filepath.Join(t.TempDir(), binaryName)
	names := extract(t, filepath.Join(o.output, p.archive()), bin)
	if diff := cmp.Diff([]string{binaryName, "LICENSE"}, names); diff != "" {
		t.Errorf("archive files (-want +got):\n%s", diff)
	}
	out, err := exec.CommandContext(ctx, bin, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "version v0.0.0-plugindist, revision abc") {
		t.Errorf("%s version: %v\n%s", binaryName, err, out)
	}
}

// extract lists a tar.gz's files and writes its binary to bin.
func extract(t *testing.T, archive, bin string) []string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Name == binaryName {
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(bin, data, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
}
