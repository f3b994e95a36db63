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

// Package queueunit owns the rules of the QueueUnit protocol
// (docs/protocol.md), so that both binaries, the visibility and debug views
// and the kubectl plugin read and write units by one rule each:
//
//   - phases (phase.go): which phases wait for admission, wait at all, hold
//     quota or are done;
//   - the charge (charge.go, admission.go): a unit's request, what an
//     admission records per pod set, and what a unit holds;
//   - the queue, quota, priority and activity of a unit (owner.go), and
//     its place in time (created.go);
//   - the status writes of each writer (conditions.go, admission.go,
//     pods.go): SetCondition, first sight (MarkEnqueued), why a unit waits
//     (SetWaiting), admission (MarkAdmitted), pods (ReportPods, and
//     MarkRefusedByQuota when koord-scheduler refuses them for quota) and
//     the end (MarkFinished);
//   - the eviction steps (eviction.go): MarkEvicted, IsEvicting, Requeue,
//     the extension's running timeout and its backoff;
//   - the execution budget (execution.go).
//
// It is pure: functions of API objects and a time passed in, no client, no
// clock, no state. Callers decide when to write; this package says what. It
// imports the API types, apimachinery and pkg/schedtypes (amounts) only, so
// that both binaries may use it (a depguard rule of .golangci.yml).
package queueunit
