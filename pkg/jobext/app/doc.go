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

// Package app assembles koord-queue-controllers: it owns the command-line
// options, the feature gates, the registry of job extensions (registry.go is
// the only place an extension is named), the scheme of every job kind, the
// wait of an enabled extension whose CRD is not installed yet (crdwait.go:
// it starts on the running manager once the CRD is served), and the
// controller-runtime manager that runs one generic reconciler per enabled
// extension.
package app
