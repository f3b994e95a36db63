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

package raycluster

import (
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

// Name is the extension's name.
const Name = "raycluster"

// OriginatedFromLabel is KubeRay's label naming the CRD a cluster came from.
const OriginatedFromLabel = "ray.io/originated-from-crd"

// New describes the RayCluster extension.
func New(framework.ExtensionOptions) framework.Extension {
	return framework.Typed(framework.Extension{
		Name: Name,
		GVK:  rayv1.GroupVersion.WithKind("RayCluster"),
		CRD:  "rayclusters.ray.io",
	}, Wrap)
}

// Cluster is a RayCluster seen by the queue.
type Cluster struct {
	c *rayv1.RayCluster
}

var (
	_ framework.GenericJob   = (*Cluster)(nil)
	_ framework.NeverManaged = (*Cluster)(nil)
)

// Wrap wraps a RayCluster.
func Wrap(c *rayv1.RayCluster) *Cluster { return &Cluster{c: c} }

// Object returns the RayCluster.
func (c *Cluster) Object() client.Object { return c.c }

// NeverManaged: a cluster that a RayJob owns, or that KubeRay made for
// another object, is queued through that object or not at all.
func (c *Cluster) NeverManaged() bool {
	for _, o := range c.c.OwnerReferences {
		if o.Kind == "RayJob" {
			return true
		}
	}
	switch c.c.Labels[OriginatedFromLabel] {
	case "RayCluster", "RayJob":
		return true
	}
	return false
}

// IsSuspended reads spec.suspend.
func (c *Cluster) IsSuspended() bool { return ptr.Deref(c.c.Spec.Suspend, false) }

// Suspend sets spec.suspend; KubeRay deletes the pods.
func (c *Cluster) Suspend() { c.c.Spec.Suspend = ptr.To(true) }

// Resume clears spec.suspend.
func (c *Cluster) Resume() { c.c.Spec.Suspend = ptr.To(false) }

// SetPodLabels labels the head and worker group templates.
func (c *Cluster) SetPodLabels(labels map[string]string) []framework.ReplacedLabel {
	return SetPodLabels(&c.c.Spec.HeadGroupSpec.Template, GroupsV1(c.c.Spec.WorkerGroupSpecs), labels)
}

// PodSets is the head and the worker groups.
func (c *Cluster) PodSets() ([]framework.PodSet, error) {
	return PodSets(&c.c.Spec.HeadGroupSpec.Template, GroupsV1(c.c.Spec.WorkerGroupSpecs))
}

// Status: the head runs when the cluster is ready; ready workers fill the
// groups in order. A RayCluster does not finish.
func (c *Cluster) Status() framework.JobStatus {
	sets, err := c.PodSets()
	if err != nil {
		return framework.JobStatus{}
	}
	ready := c.c.Status.State == rayv1.Ready //nolint:staticcheck // State is what KubeRay still reports
	return framework.JobStatus{PodSets: RunningSets(sets, ready, c.c.Status.ReadyWorkerReplicas)}
}

// GroupsV1 converts ray.io/v1 worker groups.
func GroupsV1(specs []rayv1.WorkerGroupSpec) []Group {
	out := make([]Group, 0, len(specs))
	for i := range specs {
		s := &specs[i]
		out = append(out, Group{
			Name: s.GroupName, Replicas: s.Replicas, MinReplicas: s.MinReplicas, MaxReplicas: s.MaxReplicas,
			NumOfHosts: s.NumOfHosts, Template: &s.Template,
		})
	}
	return out
}
