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

// Package ui owns the read-only web view of quotas and queues that the
// visibility server serves, when asked to, under its group-version path:
//
//	GET /apis/visibility.koord-queue.x-k8s.io/v1alpha1/ui/
//
// so it is reached through kube-apiserver (for example `kubectl proxy`) with
// the caller's own credentials. The page is one embedded index.html, app.js
// and style.css, with nothing fetched from elsewhere; its script reads the
// visibility API (quotas, queues' units) and the objects the caller may read
// (Queues, QueueUnits, events) on the same origin, so what a tenant sees is
// exactly what its RBAC and the visibility API's namespace filtering let it
// read. Every answer carries a Content-Security-Policy that allows only the
// page's own origin.
package ui
