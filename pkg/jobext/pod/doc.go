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

// Package pod is the v1 Pod extension ("pod"): a bare Pod, or a group of
// bare Pods, queued by a scheduling gate the admission webhook adds at
// creation and the reconciler removes on admission. Only pods that carry the
// quota label and have no controller owner reference are touched; a group is
// named by the koord-queue/pod-group label and sized by the
// koord-queue/pod-group-total-count annotation on each member. It has its own
// reconciler, since one unit stands for several pods and a pod cannot be
// suspended once created: eviction deletes it.
package pod
