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
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWriteTarIsSortedAndFixed(t *testing.T) {
	mtime := time.Unix(1795956914, 0)
	entries := []entry{
		{name: "tmp", dir: true, mode: 0o1777},
		{name: "b", mode: 0o755, data: []byte("binary")},
		{name: "a/c", mode: 0o644, data: []byte("x"), uid: nonrootUID, gid: nonrootUID},
		{name: "a", dir: true, mode: 0o755},
	}
	var first, second bytes.Buffer
	if err := writeTar(&first, entries, mtime); err != nil {
		t.Fatal(err)
	}
	reversed := []entry{entries[3], entries[2], entries[1], entries[0]}
	if err := writeTar(&second, reversed, mtime); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Error("the same entries in another order give other bytes")
	}
	type hdr struct {
		Name  string
		Mode  int64
		UID   int
		Owner string
		Mod   int64
	}
	var got []hdr
	tr := tar.NewReader(&first)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, hdr{h.Name, h.Mode, h.Uid, h.Uname, h.ModTime.Unix()})
	}
	want := []hdr{
		{"a/", 0o755, 0, "root", mtime.Unix()},
		{"a/c", 0o644, nonrootUID, nonrootName, mtime.Unix()},
		{"b", 0o755, 0, "root", mtime.Unix()},
		{"tmp/", 0o1777, 0, "root", mtime.Unix()},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tar headers (-want +got):\n%s", diff)
	}
}

func TestWriteTarRefusesUncleanNames(t *testing.T) {
	for _, name := range []string{"/etc/passwd", "../x", "a/../b", ""} {
		if err := writeTar(io.Discard, []entry{{name: name, mode: 0o644}}, time.Unix(0, 0)); err == nil {
			t.Errorf("entry %q written", name)
		}
	}
}

func TestBaseEntries(t *testing.T) {
	files := map[string]entry{}
	for _, e := range baseEntries() {
		files[e.name] = e
	}
	if !strings.Contains(string(files["etc/passwd"].data), "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nonroot user:\n%s", files["etc/passwd"].data)
	}
	if !strings.Contains(string(files["etc/group"].data), "nonroot:x:65532:") {
		t.Errorf("/etc/group has no nonroot group:\n%s", files["etc/group"].data)
	}
	if tmp := files["tmp"]; !tmp.dir || tmp.mode != 0o1777 {
		t.Errorf("/tmp = %+v, want a directory with mode 1777", tmp)
	}
	rest, n := files[CABundlePath].data, 0
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			t.Fatalf("CA bundle certificate %d: %v", n, err)
		}
		n++
	}
	if n < 100 || len(bytes.TrimSpace(rest)) != 0 {
		t.Errorf("CA bundle: %d certificates and %d stray bytes; want a full root store", n, len(rest))
	}
}

func TestParseFlags(t *testing.T) {
	env := func(string) string { return "" }
	build := []string{"--tag=v1.9.0", "--version=v1.9.0", "--revision=abc", "--source-date-epoch=1795956914"}
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "build", args: build},
		{name: "no tag", args: build[1:], wantErr: "--tag is required"},
		{name: "no epoch", args: build[:3], wantErr: "--source-date-epoch"},
		{name: "no version", args: []string{"--tag=v1", "--source-date-epoch=1"}, wantErr: "--version and --revision"},
		{name: "unknown binary", args: append([]string{"--binaries=kubelet"}, build...), wantErr: `unknown binary "kubelet"`},
		{name: "bad platform", args: append([]string{"--platforms=windows/amd64"}, build...), wantErr: "want linux/<arch>"},
		{name: "push", args: []string{"--push", "--tag=v1.9.0", "--image-prefix=registry.example:5000/team"}},
		{name: "push without prefix", args: []string{"--push", "--tag=v1.9.0"}, wantErr: "--push needs --image-prefix"},
		{name: "push with a trailing slash", args: []string{"--push", "--tag=v1", "--image-prefix=registry.example/"}, wantErr: "trailing slash"},
		{name: "push an invalid tag", args: []string{"--push", "--tag=v1+x", "--image-prefix=registry.example/team"}, wantErr: "image reference"},
		{name: "push an invalid prefix", args: []string{"--push", "--tag=v1", "--image-prefix=registry.example/Team A"}, wantErr: "image reference"},
		{name: "push without a registry", args: []string{"--push", "--tag=v1", "--image-prefix=koordinator-sh"}, wantErr: "names no registry"},
		{name: "push to localhost", args: []string{"--push", "--tag=v1", "--image-prefix=localhost/team"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseFlags(tc.args, env)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestSourceDateEpochFromEnvironment(t *testing.T) {
	o, err := parseFlags([]string{"--tag=v1", "--version=v1", "--revision=abc"}, func(k string) string {
		if k == "SOURCE_DATE_EPOCH" {
			return "1795956914"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Unix(1795956914, 0).UTC(); !o.meta.Created.Equal(want) {
		t.Errorf("created %s, want %s", o.meta.Created, want)
	}
}
