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

package rayjob

import (
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayv1alpha1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/raycluster"
)

// view is what the queue reads of a RayJob, whichever its API version: the
// only code that differs between the versions is the two functions below
// that fill it. The status strings of both versions have the same values,
// so they are read as ray.io/v1's.
type view struct {
	obj     client.Object
	suspend *bool // spec.suspend, written by Suspend and Resume
	started bool
	// head is nil when the job has no spec.rayClusterSpec.
	head       *corev1.PodTemplateSpec
	groups     []raycluster.Group
	deployment rayv1.JobDeploymentStatus
	jobStatus  rayv1.JobStatus
	message    string
}

// WrapV1 wraps a ray.io/v1 RayJob.
func WrapV1(j *rayv1.RayJob) *Job {
	return &Job{view: func() view {
		v := view{
			obj: j, suspend: &j.Spec.Suspend, started: j.Status.StartTime != nil,
			deployment: j.Status.JobDeploymentStatus, jobStatus: j.Status.JobStatus, message: j.Status.Message,
		}
		if cs := j.Spec.RayClusterSpec; cs != nil {
			v.head, v.groups = &cs.HeadGroupSpec.Template, raycluster.GroupsV1(cs.WorkerGroupSpecs)
		}
		return v
	}}
}

// WrapV1alpha1 wraps a ray.io/v1alpha1 RayJob.
func WrapV1alpha1(j *rayv1alpha1.RayJob) *Job {
	return &Job{view: func() view {
		s := &j.Status
		v := view{obj: j, suspend: &j.Spec.Suspend, started: s.StartTime != nil, message: s.Message}
		v.deployment, v.jobStatus = rayv1.JobDeploymentStatus(s.JobDeploymentStatus), rayv1.JobStatus(s.JobStatus)
		if cs := j.Spec.RayClusterSpec; cs != nil {
			v.head, v.groups = &cs.HeadGroupSpec.Template, groupsV1alpha1(cs.WorkerGroupSpecs)
		}
		return v
	}}
}

// groupsV1alpha1 converts ray.io/v1alpha1 worker groups, which have no
// numOfHosts: one pod per replica.
func groupsV1alpha1(specs []rayv1alpha1.WorkerGroupSpec) []raycluster.Group {
	out := make([]raycluster.Group, 0, len(specs))
	for i := range specs {
		g := &specs[i]
		out = append(out, raycluster.Group{
			Name: g.GroupName, Replicas: g.Replicas, MinReplicas: g.MinReplicas, MaxReplicas: g.MaxReplicas, Template: &g.Template,
		})
	}
	return out
}
