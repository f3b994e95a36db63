// Package chaos holds the chaos run of `make test-chaos` (and its short
// variant in `make test`): a local cluster of test/cluster with two replicas
// of each koord-queue binary, a three-level tree of ElasticQuotas, thousands
// of short batch Jobs and a schedule of faults (leaders killed and paused,
// kube-apiserver and etcd restarted, a burst of jobs), judged by the checker
// of package invariants. It runs only when KOORD_QUEUE_CHAOS is "short" or
// "full"; docs/reliability.md says what it promises and how.
package chaos
