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

package tfjob

import (
	kfv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/internal/kubeflow"
)

// Name is the extension's name.
const Name = "tfjob"

// order lists TFJob replica types as their pod sets appear.
var order = []kfv1.ReplicaType{
	kfv1.TFJobReplicaTypeChief, kfv1.TFJobReplicaTypeMaster, kfv1.TFJobReplicaTypePS,
	kfv1.TFJobReplicaTypeWorker, kfv1.TFJobReplicaTypeEval,
}

// New describes the TFJob extension.
func New(framework.ExtensionOptions) framework.Extension {
	return kubeflow.Extension(Name, kfv1.TFJobKind, "tfjobs", Wrap)
}

// Wrap wraps a TFJob.
func Wrap(j *kfv1.TFJob) *kubeflow.Job {
	return kubeflow.New(j, j.Spec.TFReplicaSpecs, &j.Spec.RunPolicy, &j.Status, order)
}
