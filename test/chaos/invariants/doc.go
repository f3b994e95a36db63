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

// Package invariants checks, while faults are injected, the promises of
// docs/reliability.md against what the API shows, and reports figures.
//
// What it owns: its own copy of the cluster's state as seen through watches
// (pods, QueueUnits and ElasticQuotas), merged in resourceVersion order (one
// etcd: one global order), the violations found, the faults it was told
// about, the admissions it saw, and, at the end, the reading of the
// kube-apiserver audit log for QueueUnit writes made by replicas that did not
// hold the leader Lease. It writes nothing to the cluster.
//
// The rules it applies are written here from docs/protocol.md, not taken
// from the code under test: a unit holds quota in phases Reserved, Dequeued
// and Running.
package invariants
