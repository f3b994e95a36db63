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

// Package version says which build of koord-queue is running: the version
// (`git describe --tags --always --dirty` of the source it was built from),
// the commit and the Go version. `make build` and `make images` set the first
// two at link time:
//
//	go build -ldflags "-X github.com/koordinator-sh/koord-queue/pkg/version.version=v1.9.0 \
//	  -X github.com/koordinator-sh/koord-queue/pkg/version.revision=<commit>" ./cmd/...
//
// A plain `go build` leaves them empty; Get then falls back to what the Go
// toolchain stamped into the binary (the module version and the VCS
// revision), and to "devel" and "unknown" when there is nothing.
//
// Both binaries print Get with --version and export it as the gauge
// koord_queue_build_info (see package metrics).
package version
