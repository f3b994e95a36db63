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

package chart

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"debug/elf"
	"encoding/pem"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// The images `make images` writes, one OCI layout per binary.
var imageNames = []string{"koord-queue", "koord-queue-controllers"}

// shells are names no file of an image may have.
var shells = []string{"sh", "bash", "ash", "dash", "zsh", "ksh", "csh", "busybox", "toybox"}

// TestImages checks the images of `make images` (KOORD_QUEUE_IMAGES, else
// _output/images): tagged with the chart's appVersion, so the chart's default
// values name them; for linux/amd64 and linux/arm64; each runs its binary as
// user 65532 with the OCI labels, and holds the binary, /etc/passwd, the CA
// bundle and /tmp, and no shell. Then the binaries taken out of the amd64
// images run as the chart's ServiceAccounts through the guide's quick start.
// `make test-images` builds the images first when they are absent or stale.
func TestImages(t *testing.T) {
	dir := os.Getenv("KOORD_QUEUE_IMAGES")
	if dir == "" {
		dir = filepath.Join(framework.RepoRoot(), "_output", "images")
	}
	tag := appVersion(t)
	if want := os.Getenv("KOORD_QUEUE_IMAGE_TAG"); want != "" && want != tag {
		t.Fatalf("images tagged %s, but the chart's appVersion is %s: its default values would not run them", want, tag)
	}
	r := render(t)
	bins := t.TempDir()
	for _, name := range imageNames {
		// The chart's default image is <IMAGE_PREFIX>/<name>:<appVersion>.
		d := r.deployment(t, name)
		if want := makeImagePrefix(t) + "/" + name + ":" + tag; d.Spec.Template.Spec.Containers[0].Image != want {
			t.Errorf("the chart runs %s, make images writes %s", d.Spec.Template.Spec.Containers[0].Image, want)
		}
		t.Run(name, func(t *testing.T) { checkImage(t, filepath.Join(dir, name), name, tag, bins) })
	}
	if t.Failed() {
		t.FailNow()
	}

	env := startControlPlane(t)
	// The production knobs a real install would set go to the API server too.
	r = render(t, "controller.replicas=2", "extension.koord-queue-controllers.replicas=2", "networkPolicy.enabled=true")
	applyChart(t, env, r)
	t.Run("binaries of the images as the chart's ServiceAccounts", func(t *testing.T) { runBinaries(t, env, r, bins) })
}

// checkImage checks one image's layout; the amd64 binary goes to bins.
func checkImage(t *testing.T, dir, name, tag, bins string) {
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		t.Fatalf("no OCI layout at %s: run 'make images' (make test-images does): %v", dir, err)
	}
	idx := taggedIndex(t, dir, tag)
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, desc := range im.Manifests {
		if desc.Platform == nil {
			t.Fatalf("index entry %s has no platform", desc.Digest)
		}
		p := desc.Platform.OS + "/" + desc.Platform.Architecture
		platforms = append(platforms, p)
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(p, func(t *testing.T) {
			bin := checkPlatformImage(t, img, name, desc.Platform)
			checkELF(t, bin, desc.Platform.Architecture)
			if desc.Platform.Architecture == "amd64" {
				path := filepath.Join(bins, name)
				if err := os.WriteFile(path, bin, 0o755); err != nil {
					t.Fatal(err)
				}
				checkVersion(t, path, img)
			}
		})
	}
	slices.Sort(platforms)
	if want := []string{"linux/amd64", "linux/arm64"}; !slices.Equal(platforms, want) {
		t.Errorf("image %s is for %v, want %v", name, platforms, want)
	}
}

// taggedIndex reads the image index the layout at dir tags with tag.
func taggedIndex(t *testing.T, dir, tag string) v1.ImageIndex {
	t.Helper()
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, d := range m.Manifests {
		ref := d.Annotations["org.opencontainers.image.ref.name"]
		if ref == tag {
			idx, err := top.ImageIndex(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			return idx
		}
		tags = append(tags, ref)
	}
	t.Fatalf("layout %s has no image tagged %s (tags %v): the chart's appVersion changed since make images", dir, tag, tags)
	return nil
}

// checkPlatformImage checks the config and the files of one image and
// returns its binary.
func checkPlatformImage(t *testing.T, img v1.Image, name string, p *v1.Platform) []byte {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != p.OS || cf.Architecture != p.Architecture {
		t.Errorf("config is for %s/%s, the index says %s/%s", cf.OS, cf.Architecture, p.OS, p.Architecture)
	}
	if want := []string{"/" + name}; !slices.Equal(cf.Config.Entrypoint, want) || len(cf.Config.Cmd) != 0 {
		t.Errorf("entrypoint %q cmd %q, want %q and no cmd", cf.Config.Entrypoint, cf.Config.Cmd, want)
	}
	if user, _, _ := strings.Cut(cf.Config.User, ":"); user != "65532" {
		t.Errorf("user %q, want 65532", cf.Config.User)
	}
	for _, key := range []string{"source", "version", "revision", "created"} {
		if cf.Config.Labels["org.opencontainers.image."+key] == "" {
			t.Errorf("label org.opencontainers.image.%s missing (labels %v)", key, cf.Config.Labels)
		}
	}
	if got, want := cf.Config.Labels["org.opencontainers.image.created"], cf.Created.UTC().Format("2006-01-02T15:04:05Z07:00"); got != want {
		t.Errorf("label created %s, config created %s", got, want)
	}

	files := map[string]*tar.Header{}
	var binary, passwd, group, caBundle []byte
	tr := tar.NewReader(mutate.Extract(img))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		clean := path.Clean("/" + h.Name)
		files[clean] = h
		if slices.Contains(shells, path.Base(clean)) {
			t.Errorf("the image has a shell: %s", clean)
		}
		if h.Typeflag == tar.TypeReg && h.Mode&0o111 != 0 && clean != "/"+name {
			t.Errorf("the image has another executable: %s", clean)
		}
		if h.Typeflag == tar.TypeSymlink || h.Typeflag == tar.TypeLink {
			t.Errorf("the image has a link: %s -> %s", clean, h.Linkname)
		}
		var into *[]byte
		switch clean {
		case "/" + name:
			into = &binary
		case "/etc/passwd":
			into = &passwd
		case "/etc/group":
			into = &group
		case "/etc/ssl/certs/ca-certificates.crt":
			into = &caBundle
		default:
			continue
		}
		if *into, err = io.ReadAll(tr); err != nil {
			t.Fatal(err)
		}
	}
	if binary == nil {
		t.Fatalf("the image has no /%s (files %v)", name, fileNames(files))
	}
	if h := files["/"+name]; h.Mode&0o755 != 0o755 || h.Uid != 0 {
		t.Errorf("/%s: mode %o owner %d, want 0755 and root", name, h.Mode, h.Uid)
	}
	if !strings.Contains(string(passwd), "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nonroot user 65532:\n%s", passwd)
	}
	if !strings.Contains(string(group), "nonroot:x:65532:") {
		t.Errorf("/etc/group has no nonroot group 65532:\n%s", group)
	}
	if n := countCertificates(t, caBundle); n < 100 {
		t.Errorf("CA bundle holds %d certificates, want a root store", n)
	}
	if h := files["/tmp"]; h == nil || h.Typeflag != tar.TypeDir || h.Mode&0o7777 != 0o1777 {
		t.Errorf("/tmp: %+v, want a directory with mode 1777", h)
	}
	return binary
}

func fileNames(files map[string]*tar.Header) []string {
	var out []string
	for n := range files {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func countCertificates(t *testing.T, data []byte) int {
	t.Helper()
	n := 0
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return n
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			t.Errorf("CA bundle certificate %d: %v", n, err)
		}
		n++
	}
}

// checkELF checks that bin is a static Linux executable for arch.
func checkELF(t *testing.T, bin []byte, arch string) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatalf("the binary is not ELF: %v", err)
	}
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
	if f.Machine != want || f.Type != elf.ET_EXEC {
		t.Errorf("ELF machine %s type %s, want %s executable", f.Machine, f.Type, want)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary is dynamically linked (%s)", p.Type)
		}
	}
}

// checkVersion runs `<binary> --version`: it exits 0 and names the version
// and revision the image's labels carry.
func checkVersion(t *testing.T, bin string, img v1.Image) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", filepath.Base(bin), err, out)
	}
	for _, key := range []string{"version", "revision"} {
		if want := cf.Config.Labels["org.opencontainers.image."+key]; !strings.Contains(string(out), " "+want) {
			t.Errorf("%s --version says %q, want %s %s", filepath.Base(bin), strings.TrimSpace(string(out)), key, want)
		}
	}
}
