package rayjob

import (
	"errors"
	"fmt"
	"slices"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayv1alpha1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/raycluster"
)

// Extension names.
const (
	Name         = "rayjob"
	NameV1alpha1 = "rayjobv1alpha1"
)

const crd = "rayjobs.ray.io"

var errNoClusterSpec = errors.New("RayJob has no spec.rayClusterSpec (jobs on an existing cluster are not queued)")

// New describes the ray.io/v1 RayJob extension.
func New(opts framework.ExtensionOptions) framework.Extension {
	sibling := slices.Contains(opts.Enabled, NameV1alpha1)
	return framework.Extension{
		Name:      Name,
		GVK:       rayv1.GroupVersion.WithKind("RayJob"),
		CRD:       crd,
		NewObject: func() client.Object { return &rayv1.RayJob{} },
		Wrap: func(obj client.Object) (framework.GenericJob, error) {
			j, ok := obj.(*rayv1.RayJob)
			if !ok {
				return nil, fmt.Errorf("want v1 *RayJob, got %T", obj)
			}
			return &JobV1{j: j}, nil
		},
		Claims: func(obj client.Object) bool {
			return !sibling || CreatedAs(obj) != rayv1alpha1.GroupVersion.String()
		},
	}
}

// NewV1alpha1 describes the ray.io/v1alpha1 RayJob extension.
func NewV1alpha1(opts framework.ExtensionOptions) framework.Extension {
	sibling := slices.Contains(opts.Enabled, Name)
	return framework.Extension{
		Name:      NameV1alpha1,
		GVK:       rayv1alpha1.GroupVersion.WithKind("RayJob"),
		CRD:       crd,
		NewObject: func() client.Object { return &rayv1alpha1.RayJob{} },
		Wrap: func(obj client.Object) (framework.GenericJob, error) {
			j, ok := obj.(*rayv1alpha1.RayJob)
			if !ok {
				return nil, fmt.Errorf("want v1alpha1 *RayJob, got %T", obj)
			}
			return &JobV1alpha1{j: j}, nil
		},
		Claims: func(obj client.Object) bool {
			return !sibling || CreatedAs(obj) == rayv1alpha1.GroupVersion.String()
		},
	}
}

// CreatedAs is the API version of the oldest managedFields entry: the version
// the object was created in, as far as the API server recorded it.
func CreatedAs(obj client.Object) string {
	version := ""
	var oldest *int64
	for _, e := range obj.GetManagedFields() {
		if e.Time == nil {
			continue
		}
		if t := e.Time.Unix(); oldest == nil || t < *oldest {
			oldest = &t
			version = e.APIVersion
		}
	}
	return version
}

// deploymentPods maps a deployment status to the pods' state: running, pending
// or none.
func deploymentPods(sets []framework.PodSet, status string) []framework.PodSetStatus {
	switch status {
	case "Running":
		return raycluster.AllSets(sets, true)
	case "Initializing", "Waiting", "Retrying", "Suspending":
		return raycluster.AllSets(sets, false)
	}
	return nil
}
