// Package raycluster is the ray.io/v1 RayCluster extension ("raycluster"). It
// owns the takeover rule (spec.suspend true; never a cluster owned by a
// RayJob or labelled ray.io/originated-from-crd: RayCluster or RayJob),
// suspension by spec.suspend, pod counts from status (head ready when the
// cluster is ready, readyWorkerReplicas filled into the worker groups in
// order), and the head-plus-worker-groups pod-set math that the rayjob
// extension reuses for both RayJob versions.
package raycluster
