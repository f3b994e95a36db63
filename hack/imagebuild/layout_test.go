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
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// writeFake writes the layout of a fake koord-queue for two platforms and
// returns its index digest.
func writeFake(t *testing.T, dir string, m metadata) v1.Hash {
	t.Helper()
	base, err := layer(baseEntries(), m.Created)
	if err != nil {
		t.Fatal(err)
	}
	var imgs []platformImage
	for _, p := range []platform{{"linux", "amd64"}, {"linux", "arm64"}} {
		img, err := buildImage(binaries["koord-queue"], p, base, []byte("not a binary "+p.Arch), m)
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, platformImage{platform: p, image: img})
	}
	digest, err := writeLayout(dir, buildIndex(binaries["koord-queue"], imgs, m), "v1.9.0")
	if err != nil {
		t.Fatal(err)
	}
	return digest
}

func TestLayoutIsReproducibleAndTagged(t *testing.T) {
	m := metadata{Source: "https://example.invalid/koord-queue", Version: "v1.9.0", Revision: "abc", Created: time.Unix(1795956914, 0).UTC()}
	dir := t.TempDir()
	first := writeFake(t, filepath.Join(dir, "one"), m)
	second := writeFake(t, filepath.Join(dir, "two"), m)
	if first != second {
		t.Errorf("two builds of the same input: %s and %s", first, second)
	}
	m.Created = m.Created.Add(time.Second)
	if other := writeFake(t, filepath.Join(dir, "three"), m); other == first {
		t.Errorf("another creation time gives the same digest %s", other)
	}

	idx, err := taggedIndex(filepath.Join(dir, "one"), "v1.9.0")
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := idx.Digest(); d != first {
		t.Errorf("tagged index %s, want %s", d, first)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 2 || im.Manifests[1].Platform == nil || im.Manifests[1].Platform.Architecture != "arm64" {
		t.Fatalf("index manifests %+v, want amd64 and arm64", im.Manifests)
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" || cf.Config.Labels[labelRevision] != "abc" || cf.Created.Unix() != 1795956914 {
		t.Errorf("config user %q, labels %v, created %s", cf.Config.User, cf.Config.Labels, cf.Created)
	}
	if _, err := taggedIndex(filepath.Join(dir, "one"), "v2"); err == nil {
		t.Error("found an image under a tag it does not have")
	}
}
