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

// Package framework is the part of koord-queue-controllers that every job kind
// shares: the small GenericJob interface a kind implements, the optional
// capability interfaces found by type assertion, the Extension description and
// the Registry type, the pod-template resource math, and the one generic
// reconciler that keeps a job and its QueueUnit in step as docs/protocol.md
// describes.
//
// The reconciler owns the extension's side of the protocol: the QueueUnit's
// metadata and spec, and the status fields the protocol gives to the
// extension (Running/Succeed/Failed, podState, admissions[].running,
// reclaimablePods, Enqueued after an eviction, TimeoutBackoff after a running
// timeout or a quota refusal timeout, PodsRefusedByQuota). It never writes
// the fields the scheduler owns, and it writes its own with the functions of
// pkg/queueunit, which owns the protocol's rules. Everything it decides comes
// from the job, its namespace, the unit and the unit's pods (cached slim:
// TrimPod) as read from the API; the only state it keeps between reconciles
// is which started jobs --manage-all-jobs already told it leaves alone,
// which evicted pods of each admitted unit it already told of (so each event
// is recorded once per process; koordinator.go says why in memory), and the
// resourceVersion of its own last write of each job, so that it decides
// nothing on a cached job older than that write (ownwrites.go).
//
// NamespaceSelector (namespaces.go) is the one place that says which
// namespaces --manage-all-jobs takes jobs from.
package framework
