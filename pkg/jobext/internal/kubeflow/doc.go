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

// Package kubeflow holds what TFJob and PyTorchJob (kubeflow.org/v1) share:
// suspension by spec.runPolicy.suspend (the field the training operator
// obeys; the scheduling.x-k8s.io/suspend annotation alone holds nothing),
// resumption that clears the field and drops the annotation, status.startTime
// as the sign a job started, one pod set per replica type in a fixed order,
// and pod counts from status.replicaStatuses. Which jobs are managed is the
// framework's rule (a quota label, or --manage-all-jobs for a job not yet
// started or suspended). It owns no kind; tfjob and pytorchjob wrap it.
package kubeflow
