package tfjob

import (
	"fmt"

	kfv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	return framework.Extension{
		Name:      Name,
		GVK:       kfv1.SchemeGroupVersion.WithKind(kfv1.TFJobKind),
		CRD:       "tfjobs.kubeflow.org",
		NewObject: func() client.Object { return &kfv1.TFJob{} },
		Wrap: func(obj client.Object) (framework.GenericJob, error) {
			j, ok := obj.(*kfv1.TFJob)
			if !ok {
				return nil, fmt.Errorf("want *TFJob, got %T", obj)
			}
			return Wrap(j), nil
		},
	}
}

// Wrap wraps a TFJob.
func Wrap(j *kfv1.TFJob) *kubeflow.Job {
	return kubeflow.New(j, j.Spec.TFReplicaSpecs, &j.Spec.RunPolicy, &j.Status, order)
}
