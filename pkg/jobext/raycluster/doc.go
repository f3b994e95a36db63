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

// Package raycluster is the ray.io/v1 RayCluster extension ("raycluster"). It
// owns the takeover rule (spec.suspend true; never a cluster owned by a
// RayJob or labelled ray.io/originated-from-crd: RayCluster or RayJob),
// suspension by spec.suspend, pod counts from status (head ready when the
// cluster is ready, readyWorkerReplicas filled into the worker groups in
// order), and the head-plus-worker-groups pod-set math that the rayjob
// extension reuses for both RayJob versions.
package raycluster
