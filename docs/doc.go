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

// Package docs holds the checks that keep the user guide (user-guide.md)
// and its Chinese translation (user-guide.zh.md) true: Blocks splits a guide
// into its fenced blocks and says which ones the end-to-end suite plays
// (test/e2e plays them on the local cluster), CompareBlocks finds where the
// two guides' blocks differ, and the package's tests fail when a label,
// annotation, flag, feature gate, metric, event reason or configuration field
// the code knows is missing from either guide, when one of the original
// guide's YAML examples is not in it verbatim, or when the translation's
// blocks are not the English guide's. It owns no state.
package docs
