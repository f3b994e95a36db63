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

// Package nodefit answers whether each pod of a unit could run on some node
// of the cluster. Quota is not placement, but a pod that fits no node it may
// run on (by its node selector, required node affinity and tolerations) never
// runs, and its unit would hold quota forever. The package is pure: it takes
// the nodes and the pod sets, and holds no client and no state.
package nodefit
