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

// Command imagebuild builds the container images of koord-queue without a
// container engine: it cross-compiles the binaries, puts each on an empty base
// with the few files a static Go binary needs, and writes one OCI image layout
// per binary (a multi-platform image index) with go-containerregistry. With
// --push it copies those layouts to a registry instead.
//
// `make images` and `make push` run it; see docs/release.md.
//
// # What an image holds
//
// Two layers. The base layer is the same in every image: /etc/passwd and
// /etc/group with root, nobody and nonroot (65532), the CA bundle at
// /etc/ssl/certs/ca-certificates.crt, /home/nonroot and /tmp (mode 1777). The
// second layer is the binary, /<name>. There is no shell and no package
// manager. The config runs the binary as its entrypoint as user 65532 and
// carries the org.opencontainers.image.{source,version,revision,created} labels.
//
// The CA bundle is not taken from the machine that builds: it is the NSS
// root store of the Go module golang.org/x/crypto/x509roots/fallback, at the
// version go.mod pins, so every machine writes the same bytes. Roots the
// store marks with a distrust-after date cannot be written in a PEM bundle
// and are left out.
//
// # Reproducible
//
// The same commit gives the same digests: binaries are built with
// CGO_ENABLED=0, -trimpath, -buildvcs=false and an empty build ID; tar entries
// are sorted, owned by fixed users, with fixed modes and the modification time
// --source-date-epoch (the commit time, also the image's creation time).
// Building twice and comparing the digests it prints checks this.
package main
