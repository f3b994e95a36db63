package pytorchjob

import (
	kfv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/kubeflow"
)

// Name is the extension's name.
const Name = "pytorchjob"

// order lists PyTorchJob replica types as their pod sets appear.
var order = []kfv1.ReplicaType{kfv1.PyTorchJobReplicaTypeMaster, kfv1.PyTorchJobReplicaTypeWorker}

// New describes the PyTorchJob extension.
func New(framework.ExtensionOptions) framework.Extension {
	return kubeflow.Extension(Name, kfv1.PyTorchJobKind, "pytorchjobs", Wrap)
}

// Wrap wraps a PyTorchJob.
func Wrap(j *kfv1.PyTorchJob) *kubeflow.Job {
	return kubeflow.New(j, j.Spec.PyTorchReplicaSpecs, &j.Spec.RunPolicy, &j.Status, order)
}
