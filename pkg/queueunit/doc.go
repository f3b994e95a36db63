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
//     (SetWaiting), admission (MarkAdmitted), pods (ReportPods) and the end
//     (MarkFinished);
//   - the eviction steps (eviction.go): MarkEvicted, IsEvicting, Requeue,
//     the extension's running timeout and its backoff;
//   - the execution budget (execution.go).
//
// It is pure: functions of API objects and a time passed in, no client, no
// clock, no state. Callers decide when to write; this package says what. It
// imports the API types, apimachinery and pkg/schedtypes (amounts) only, so
// that both binaries may use it (a depguard rule of .golangci.yml).
package queueunit
