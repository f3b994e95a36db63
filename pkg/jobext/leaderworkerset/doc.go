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

// Package leaderworkerset is the LeaderWorkerSet extension ("leaderworkerset",
// leaderworkerset.x-k8s.io/v1). A LeaderWorkerSet has no suspension field and
// never completes: each of its groups (spec.replicas of them) is a unit of
// its own, of two pod sets (the leader and its size-1 workers), admitted
// whole. Its pods are held by the scheduling gate the pod webhook adds at
// creation (framework.SchedulingGate) and are let go when their group's unit
// is admitted; eviction deletes a group's pods, which its StatefulSets make
// again, held. The kind has its own reconciler, keyed by the
// LeaderWorkerSet, since one object stands for several units.
package leaderworkerset
