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
