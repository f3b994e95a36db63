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

// Package app wires the koord-queue binary: it parses flags and the
// KoordQueueConfiguration file, builds the controller-runtime manager (leader
// election, metrics and health on one port), the plugin registry and the
// scheduler, and runs them until the process is told to stop. It hands each
// plugin its arguments, completed from the flags and top-level fields that
// set them before they were arguments (pluginargs.go).
package app
