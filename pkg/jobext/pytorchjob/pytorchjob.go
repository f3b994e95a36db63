package pytorchjob

import (
	"fmt"

	kfv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/kubeflow"
)

// Name is the extension's name.
const Name = "pytorchjob"

// order lists PyTorchJob replica types as their pod sets appear.
var order = []kfv1.ReplicaType{kfv1.PyTorchJobReplicaTypeMaster, kfv1.PyTorchJobReplicaTypeWorker}

// New describes the PyTorchJob extension.
func New(framework.ExtensionOptions) framework.Extension {
	return framework.Extension{
		Name:      Name,
		GVK:       kfv1.SchemeGroupVersion.WithKind(kfv1.PyTorchJobKind),
		CRD:       "pytorchjobs.kubeflow.org",
		NewObject: func() client.Object { return &kfv1.PyTorchJob{} },
		Wrap: func(obj client.Object) (framework.GenericJob, error) {
			j, ok := obj.(*kfv1.PyTorchJob)
			if !ok {
				return nil, fmt.Errorf("want *PyTorchJob, got %T", obj)
			}
			return Wrap(j), nil
		},
	}
}

// Wrap wraps a PyTorchJob.
func Wrap(j *kfv1.PyTorchJob) *kubeflow.Job {
	return kubeflow.New(j, j.Spec.PyTorchReplicaSpecs, &j.Spec.RunPolicy, &j.Status, order)
}
