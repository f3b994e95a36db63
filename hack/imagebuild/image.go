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
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The OCI annotation keys the images carry as labels (and the index as
// annotations).
const (
	labelSource   = "org.opencontainers.image.source"
	labelVersion  = "org.opencontainers.image.version"
	labelRevision = "org.opencontainers.image.revision"
	labelCreated  = "org.opencontainers.image.created"
	labelTitle    = "org.opencontainers.image.title"
	// refName names an image inside an OCI layout: its tag.
	refName = "org.opencontainers.image.ref.name"
)

// metadata is what every image of one build shares.
type metadata struct {
	Source   string
	Version  string
	Revision string
	Created  time.Time
}

func (m metadata) labels(title string) map[string]string {
	return map[string]string{
		labelSource:   m.Source,
		labelVersion:  m.Version,
		labelRevision: m.Revision,
		labelCreated:  m.Created.UTC().Format(time.RFC3339),
		labelTitle:    title,
	}
}

// binarySpec says how one binary runs in its image.
type binarySpec struct {
	Name  string
	Ports []int
}

// layer turns entries into an OCI layer (gzip, compressed when read).
func layer(entries []entry, mtime time.Time) (v1.Layer, error) {
	var b bytes.Buffer
	if err := writeTar(&b, entries, mtime); err != nil {
		return nil, err
	}
	data := b.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// buildImage assembles the image of one binary for one platform: the base
// layer, then the binary.
func buildImage(spec binarySpec, p platform, base v1.Layer, binary []byte, m metadata) (v1.Image, error) {
	bin, err := layer(binaryEntries(spec.Name, binary), m.Created)
	if err != nil {
		return nil, err
	}
	ports := map[string]struct{}{}
	for _, port := range spec.Ports {
		ports[strconv.Itoa(port)+"/tcp"] = struct{}{}
	}
	created := v1.Time{Time: m.Created.UTC()}
	cfg := &v1.ConfigFile{
		Architecture: p.Arch,
		OS:           p.OS,
		Created:      created,
		RootFS:       v1.RootFS{Type: "layers"},
		Config: v1.Config{
			Entrypoint:   []string{"/" + spec.Name},
			User:         fmt.Sprintf("%d:%d", nonrootUID, nonrootUID),
			WorkingDir:   "/",
			ExposedPorts: ports,
			Labels:       m.labels(spec.Name),
		},
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, err
	}
	return mutate.Append(img,
		mutate.Addendum{Layer: base, MediaType: types.OCILayer,
			History: v1.History{Created: created, CreatedBy: "imagebuild: /etc/passwd, /etc/group, CA bundle, /tmp", Comment: "base"}},
		mutate.Addendum{Layer: bin, MediaType: types.OCILayer,
			History: v1.History{Created: created, CreatedBy: "imagebuild: /" + spec.Name, Comment: m.Version}},
	)
}

// platformImage is one entry of an image index.
type platformImage struct {
	platform platform
	image    v1.Image
}

// buildIndex joins the platform images of one binary into an OCI image index
// annotated like its images.
func buildIndex(spec binarySpec, imgs []platformImage, m metadata) v1.ImageIndex {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, pi := range imgs {
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add: pi.image,
			Descriptor: v1.Descriptor{
				MediaType: types.OCIManifestSchema1,
				Platform:  &v1.Platform{OS: pi.platform.OS, Architecture: pi.platform.Arch},
			},
		})
	}
	return mutate.Annotations(idx, m.labels(spec.Name)).(v1.ImageIndex)
}

// writeLayout replaces dir with an OCI image layout holding idx, tagged tag.
func writeLayout(dir string, idx v1.ImageIndex, tag string) (v1.Hash, error) {
	if err := os.RemoveAll(dir); err != nil {
		return v1.Hash{}, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return v1.Hash{}, err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("layout %s: %w", dir, err)
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{refName: tag})); err != nil {
		return v1.Hash{}, fmt.Errorf("layout %s: %w", dir, err)
	}
	return idx.Digest()
}
