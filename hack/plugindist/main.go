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
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
	"time"
)

const (
	binaryName = "kubectl-koord_queue"
	pkgPath    = "./cmd/kubectl-koord_queue"
	// releaseURL is where a release's archives are downloaded from.
	releaseURL = "https://github.com/koordinator-sh/koord-queue/releases/download"
	// defaultPlatforms are the krew manifest's platforms.
	defaultPlatforms = "linux/amd64,linux/arm64,darwin/amd64,darwin/arm64,windows/amd64,windows/arm64"
	versionPkg       = "github.com/koordinator-sh/koord-queue/pkg/version"
)

// options are plugindist's command line.
type options struct {
	root, output, template string
	// pkg is the package built: the plugin's, a stand-in in tests.
	pkg               string
	version, revision string
	platforms         []platform
	sourceDate        time.Time
}

// platform is one os/arch pair.
type platform struct{ OS, Arch string }

func (p platform) String() string { return p.OS + "/" + p.Arch }

// binary is the binary's name on the platform.
func (p platform) binary() string {
	if p.OS == "windows" {
		return binaryName + ".exe"
	}
	return binaryName
}

// archive is the archive's file name on the platform.
func (p platform) archive() string {
	ext := ".tar.gz"
	if p.OS == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("%s_%s_%s%s", binaryName, p.OS, p.Arch, ext)
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "plugindist:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "plugindist:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (*options, error) {
	fs := flag.NewFlagSet("plugindist", flag.ContinueOnError)
	o := &options{pkg: pkgPath}
	var platforms, epoch string
	fs.StringVar(&o.root, "root", ".", "Root of the repository.")
	fs.StringVar(&o.output, "output", "_output/plugin", "Folder of the archives, checksums.txt and koord-queue.yaml.")
	fs.StringVar(&o.template, "template", "plugins/koord-queue.yaml.tmpl", "The krew manifest's template.")
	fs.StringVar(&o.version, "version", "", "Version linked in and named in the manifest and URLs (a release tag).")
	fs.StringVar(&o.revision, "revision", "unknown", "Commit linked in.")
	fs.StringVar(&platforms, "platforms", defaultPlatforms, "Comma-separated os/arch pairs.")
	fs.StringVar(&epoch, "source-date-epoch", "0", "Seconds since 1970 given to every file in the archives.")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if o.version == "" {
		return nil, errors.New("--version is required")
	}
	var err error
	if o.platforms, err = parsePlatforms(platforms); err != nil {
		return nil, err
	}
	secs, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("--source-date-epoch: %w", err)
	}
	o.sourceDate = time.Unix(secs, 0).UTC()
	return o, nil
}

func parsePlatforms(s string) ([]platform, error) {
	var out []platform
	for _, p := range strings.Split(s, ",") {
		osName, arch, ok := strings.Cut(strings.TrimSpace(p), "/")
		if !ok || osName == "" || arch == "" {
			return nil, fmt.Errorf("platform %q is not os/arch", p)
		}
		out = append(out, platform{OS: osName, Arch: arch})
	}
	return out, nil
}

// run builds and packs every platform, then writes the checksums and the
// manifest.
func run(ctx context.Context, o *options) error {
	if err := os.MkdirAll(o.output, 0o755); err != nil {
		return err
	}
	license, err := os.ReadFile(filepath.Join(o.root, "LICENSE"))
	if err != nil {
		return err
	}
	for _, p := range o.platforms {
		bin, err := build(ctx, o, p)
		if err != nil {
			return fmt.Errorf("build %s: %w", p, err)
		}
		files := []archiveFile{{name: p.binary(), data: bin, mode: 0o755}, {name: "LICENSE", data: license, mode: 0o644}}
		data, err := pack(p, files, o.sourceDate)
		if err != nil {
			return fmt.Errorf("pack %s: %w", p, err)
		}
		if err := os.WriteFile(filepath.Join(o.output, p.archive()), data, 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", filepath.Join(o.output, p.archive()))
	}
	return writeRelease(o.output, o.template, o.version, o.platforms)
}

// build cross-compiles the plugin for p and returns the binary.
func build(ctx context.Context, o *options, p platform) ([]byte, error) {
	dir, err := os.MkdirTemp("", "plugindist-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	out := filepath.Join(dir, p.binary())
	ldflags := fmt.Sprintf("-s -w -X %s.version=%s -X %s.revision=%s", versionPkg, o.version, versionPkg, o.revision)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", ldflags, "-o", out, o.pkg)
	cmd.Dir = o.root
	cmd.Env = append(os.Environ(), "GOOS="+p.OS, "GOARCH="+p.Arch, "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
}

// archiveFile is one file of an archive.
type archiveFile struct {
	name string
	data []byte
	mode int64
}

// pack writes files into p's archive format, in the given order, every file
// dated at.
func pack(p platform, files []archiveFile, at time.Time) ([]byte, error) {
	var buf bytes.Buffer
	if p.OS == "windows" {
		zw := zip.NewWriter(&buf)
		for _, f := range files {
			h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: at}
			h.SetMode(os.FileMode(f.mode))
			w, err := zw.CreateHeader(h)
			if err != nil {
				return nil, err
			}
			if _, err := w.Write(f.data); err != nil {
				return nil, err
			}
		}
		err := zw.Close()
		return buf.Bytes(), err
	}
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	gz.ModTime = at
	tw := tar.NewWriter(gz)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: at, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	err = gz.Close()
	return buf.Bytes(), err
}

// manifestPlatform is one platform entry of the krew manifest.
type manifestPlatform struct {
	OS, Arch, URI, SHA256, Binary string
}

// writeRelease reads the archives of platforms in dir, writes
// checksums.txt and renders the manifest template into koord-queue.yaml.
func writeRelease(dir, templatePath, version string, platforms []platform) error {
	var entries []manifestPlatform
	var sums strings.Builder
	for _, p := range platforms {
		sum, err := fileSHA256(filepath.Join(dir, p.archive()))
		if err != nil {
			return err
		}
		fmt.Fprintf(&sums, "%s  %s\n", sum, p.archive())
		entries = append(entries, manifestPlatform{OS: p.OS, Arch: p.Arch, SHA256: sum, Binary: p.binary(),
			URI: fmt.Sprintf("%s/%s/%s", releaseURL, version, p.archive())})
	}
	if err := os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(sums.String()), 0o644); err != nil {
		return err
	}
	manifest, err := renderManifest(templatePath, version, entries)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "koord-queue.yaml"), manifest, 0o644)
}

// renderManifest fills the krew manifest template.
func renderManifest(templatePath, version string, platforms []manifestPlatform) ([]byte, error) {
	t, err := template.New(filepath.Base(templatePath)).Option("missingkey=error").ParseFiles(templatePath)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	err = t.Execute(&buf, struct {
		Version   string
		Platforms []manifestPlatform
	}{version, platforms})
	return buf.Bytes(), err
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
