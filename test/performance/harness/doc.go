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

// Package harness measures koord-queue under load the way Kueue's performance
// harness measures Kueue: a real kube-apiserver and etcd (envtest), the
// scheduler under test as a separate process, workloads (QueueUnits) created
// directly on a schedule, and execution faked by the harness itself, which
// plays the job extension of docs/protocol.md.
//
// A run owns its control plane, its koord-queue process and its output
// folder. The Recorder owns the per-unit timeline; everything in the summary
// is computed from that timeline, from koord-queue's /metrics and from
// /proc of its process after the last unit finished.
package harness
