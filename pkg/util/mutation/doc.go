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

// Package mutation plants known bugs in the binaries, for the chaos run to
// show that its checker catches each (docs/reliability.md, "Planted bugs").
// It owns one thing: which bug, if any, this process plants. Only a binary
// built with the build tag chaosmutation reads it, from the environment
// variable KOORD_QUEUE_MUTATION; in every other build On is a constant false
// and the planted branches are compiled away.
package mutation
