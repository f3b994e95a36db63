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
	"errors"
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
	ext := framework.Typed(framework.Extension{Name: Name, GVK: rayv1.GroupVersion.WithKind("RayJob"), CRD: crd}, WrapV1)
	ext.Claims = claims(opts, NameV1alpha1, false)
	return ext
}

// NewV1alpha1 describes the ray.io/v1alpha1 RayJob extension.
func NewV1alpha1(opts framework.ExtensionOptions) framework.Extension {
	ext := framework.Typed(framework.Extension{Name: NameV1alpha1, GVK: rayv1alpha1.GroupVersion.WithKind("RayJob"), CRD: crd}, WrapV1alpha1)
	ext.Claims = claims(opts, Name, true)
	return ext
}

// claims is the rule by which the extension of one version leaves to its
// sibling the jobs created in the sibling's version: alone, an extension
// serves every job; with its sibling enabled, the v1alpha1 extension (alpha)
// serves the jobs created as v1alpha1 and the v1 extension all others.
func claims(opts framework.ExtensionOptions, sibling string, alpha bool) func(client.Object) bool {
	withSibling := slices.Contains(opts.Enabled, sibling)
	return func(obj client.Object) bool {
		return !withSibling || (CreatedAs(obj) == rayv1alpha1.GroupVersion.String()) == alpha
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

// Job is a RayJob of either API version seen by the queue. Every method reads
// the job afresh through view, so a job the client updated in place is seen
// as it now is.
type Job struct {
	view func() view
}

var (
	_ framework.GenericJob    = (*Job)(nil)
	_ framework.StartReporter = (*Job)(nil)
)

// Object returns the RayJob.
func (r *Job) Object() client.Object { return r.view().obj }

// Started: KubeRay set status.startTime.
func (r *Job) Started() bool { return r.view().started }

// IsSuspended reads spec.suspend.
func (r *Job) IsSuspended() bool { return *r.view().suspend }

// Suspend sets spec.suspend; KubeRay deletes the cluster.
func (r *Job) Suspend() { *r.view().suspend = true }

// Resume clears spec.suspend.
func (r *Job) Resume() { *r.view().suspend = false }

// SetPodLabels labels the templates of spec.rayClusterSpec; a job without one
// has no pod template to label.
func (r *Job) SetPodLabels(labels map[string]string) []framework.ReplacedLabel {
	v := r.view()
	if v.head == nil {
		return nil
	}
	return raycluster.SetPodLabels(v.head, v.groups, labels)
}

// PodSets is the cluster's head and worker groups.
func (r *Job) PodSets() ([]framework.PodSet, error) {
	v := r.view()
	if v.head == nil {
		return nil, errNoClusterSpec
	}
	return raycluster.PodSets(v.head, v.groups)
}

// Status follows status.jobDeploymentStatus: Complete and Failed end the job
// (failed unless the Ray job SUCCEEDED); while it deploys or runs, its pods
// are pending or running.
func (r *Job) Status() framework.JobStatus {
	v := r.view()
	var st framework.JobStatus
	switch v.deployment {
	case rayv1.JobDeploymentStatusComplete, rayv1.JobDeploymentStatusFailed:
		st.Finished = true
		st.Failed = v.jobStatus != rayv1.JobStatusSucceeded
		st.Message = v.message
		return st
	}
	sets, err := r.PodSets()
	if err != nil {
		return st
	}
	st.PodSets = deploymentPods(sets, v.deployment)
	return st
}

// deploymentPods maps a deployment status to the pods' state: running, pending
// or none.
func deploymentPods(sets []framework.PodSet, status rayv1.JobDeploymentStatus) []framework.PodSetStatus {
	switch status {
	case rayv1.JobDeploymentStatusRunning:
		return raycluster.AllSets(sets, true)
	case rayv1.JobDeploymentStatusInitializing, rayv1.JobDeploymentStatusWaiting,
		rayv1.JobDeploymentStatusRetrying, rayv1.JobDeploymentStatusSuspending:
		return raycluster.AllSets(sets, false)
	}
	return nil
}
