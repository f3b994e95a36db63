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
