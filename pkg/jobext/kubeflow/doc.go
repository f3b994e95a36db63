// Package kubeflow holds what TFJob and PyTorchJob (kubeflow.org/v1) share:
// the takeover rule (spec.runPolicy.suspend or the scheduling.x-k8s.io/suspend
// annotation, and no status.startTime; or a Queuing condition), suspension by
// spec.runPolicy.suspend, resumption that also drops the annotation, one pod
// set per replica type in a fixed order, and pod counts from
// status.replicaStatuses. It owns no kind; tfjob and pytorchjob wrap it.
package kubeflow
