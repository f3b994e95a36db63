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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// validatePush checks what --push needs before anything is read or sent:
// a prefix that makes a valid reference with every binary and the tag.
func validatePush(o *options) error {
	if o.prefix == "" {
		return errors.New("--push needs --image-prefix (IMAGE_PREFIX), the registry and repository to push to")
	}
	if strings.HasSuffix(o.prefix, "/") {
		return fmt.Errorf("--image-prefix %q: want registry[:port]/path without a trailing slash", o.prefix)
	}
	// Without a registry host the reference would silently mean a default
	// registry; pushing there is never what `make push` is for.
	host, _, _ := strings.Cut(o.prefix, "/")
	if !strings.ContainsAny(host, ".:") && host != "localhost" {
		return fmt.Errorf("--image-prefix %q names no registry: want registry[:port]/path, such as registry.example/koordinator-sh", o.prefix)
	}
	for _, b := range o.binaries {
		if _, err := pushRef(o.prefix, b, o.tag); err != nil {
			return err
		}
	}
	return nil
}

func pushRef(prefix, binary, tag string) (name.Tag, error) {
	s := prefix + "/" + binary + ":" + tag
	t, err := name.NewTag(s, name.StrictValidation)
	if err != nil {
		return name.Tag{}, fmt.Errorf("image reference %s: %w", s, err)
	}
	return t, nil
}

// push sends the index tagged o.tag of every binary's layout to the registry,
// with the credentials of the Docker config (docker login) if any.
func push(ctx context.Context, o *options) error {
	for _, b := range o.binaries {
		dir := filepath.Join(o.root, o.output, b)
		if filepath.IsAbs(o.output) {
			dir = filepath.Join(o.output, b)
		}
		idx, err := taggedIndex(dir, o.tag)
		if err != nil {
			return err
		}
		ref, err := pushRef(o.prefix, b, o.tag)
		if err != nil {
			return err
		}
		if err := remote.WriteIndex(ref, idx, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
			return fmt.Errorf("push %s: %w", ref, err)
		}
		digest, err := idx.Digest()
		if err != nil {
			return err
		}
		fmt.Printf("pushed %s@%s\n", ref, digest)
	}
	return nil
}

// taggedIndex finds the image index tagged tag in the OCI layout at dir.
func taggedIndex(dir, tag string) (v1.ImageIndex, error) {
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		return nil, fmt.Errorf("no OCI layout at %s (run make images first): %w", dir, err)
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	top, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	m, err := top.IndexManifest()
	if err != nil {
		return nil, err
	}
	var tags []string
	for _, d := range m.Manifests {
		if d.Annotations[refName] == tag {
			return top.ImageIndex(d.Digest)
		}
		tags = append(tags, d.Annotations[refName])
	}
	return nil, fmt.Errorf("OCI layout %s has no image tagged %s (it has %v): run make images with the same IMAGE_TAG", dir, tag, tags)
}
