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

// Package e2e plays every YAML example of the user guide (test/testdata/guide)
// on a local cluster of real processes (package test/cluster) running both
// koord-queue binaries: TestMain starts a fresh cluster on free ports in a
// temporary state directory and stops it at the end. A missing tool or binary
// fails the suite; nothing is skipped.
//
// Pods run on kwok's fake nodes for podRunTime (the cluster's default stage
// delay), so the guide's Jobs are applied exactly as written. Assertions poll;
// the few "stays so" checks watch for a bounded time.
package e2e
