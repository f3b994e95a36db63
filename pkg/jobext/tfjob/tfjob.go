package tfjob

import (
	kfv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/kubeflow"
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
