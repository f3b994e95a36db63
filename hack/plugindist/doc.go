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
// Command plugindist builds the release archives of the kubectl plugin
// kubectl-koord_queue and its krew manifest; `make plugin-dist` runs it.
//
// For each platform (linux, darwin and windows on amd64 and arm64 by
// default) it cross-compiles ./cmd/kubectl-koord_queue without cgo, with the
// version and revision linked in as `make build` does, and packs the binary
// and LICENSE into kubectl-koord_queue_<os>_<arch>.tar.gz (.zip on windows).
// Archives are reproducible: fixed order, modes and times (the commit's
// time, --source-date-epoch). It then writes checksums.txt (sha256 of each
// archive, as sha256sum prints them) and renders plugins/koord-queue.yaml.tmpl
// into koord-queue.yaml, one krew platform entry per archive with its
// download URL under the project's GitHub releases and its sha256.
//
// Output goes to --output (default _output/plugin), which git ignores.
package main
