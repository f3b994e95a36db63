package rayjob

import (
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/raycluster"
)

// JobV1 is a ray.io/v1 RayJob seen by the queue.
type JobV1 struct {
	j *rayv1.RayJob
}

var (
	_ framework.GenericJob    = (*JobV1)(nil)
	_ framework.StartReporter = (*JobV1)(nil)
)

// WrapV1 wraps a v1 RayJob.
func WrapV1(j *rayv1.RayJob) *JobV1 { return &JobV1{j: j} }

// Object returns the RayJob.
func (r *JobV1) Object() client.Object { return r.j }

// Started: KubeRay set status.startTime.
func (r *JobV1) Started() bool { return r.j.Status.StartTime != nil }

// IsSuspended reads spec.suspend.
func (r *JobV1) IsSuspended() bool { return r.j.Spec.Suspend }

// Suspend sets spec.suspend; KubeRay deletes the cluster.
func (r *JobV1) Suspend() { r.j.Spec.Suspend = true }

// Resume clears spec.suspend.
func (r *JobV1) Resume() { r.j.Spec.Suspend = false }

// PodSets is the cluster's head and worker groups.
func (r *JobV1) PodSets() ([]framework.PodSet, error) {
	cs := r.j.Spec.RayClusterSpec
	if cs == nil {
		return nil, errNoClusterSpec
	}
	return raycluster.PodSets(&cs.HeadGroupSpec.Template, raycluster.GroupsV1(cs.WorkerGroupSpecs))
}

// Status follows status.jobDeploymentStatus.
func (r *JobV1) Status() framework.JobStatus {
	var st framework.JobStatus
	switch r.j.Status.JobDeploymentStatus {
	case rayv1.JobDeploymentStatusComplete, rayv1.JobDeploymentStatusFailed:
		st.Finished = true
		st.Failed = r.j.Status.JobStatus != rayv1.JobStatusSucceeded
		st.Message = r.j.Status.Message
		return st
	}
	sets, err := r.PodSets()
	if err != nil {
		return st
	}
	st.PodSets = deploymentPods(sets, string(r.j.Status.JobDeploymentStatus))
	return st
}
