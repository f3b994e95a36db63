package rayjob

import (
	rayv1alpha1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/raycluster"
)

// JobV1alpha1 is a ray.io/v1alpha1 RayJob seen by the queue.
type JobV1alpha1 struct {
	j *rayv1alpha1.RayJob
}

var (
	_ framework.GenericJob    = (*JobV1alpha1)(nil)
	_ framework.StartReporter = (*JobV1alpha1)(nil)
)

// WrapV1alpha1 wraps a v1alpha1 RayJob.
func WrapV1alpha1(j *rayv1alpha1.RayJob) *JobV1alpha1 { return &JobV1alpha1{j: j} }

// Object returns the RayJob.
func (r *JobV1alpha1) Object() client.Object { return r.j }

// Started: KubeRay set status.startTime.
func (r *JobV1alpha1) Started() bool { return r.j.Status.StartTime != nil }

// IsSuspended reads spec.suspend.
func (r *JobV1alpha1) IsSuspended() bool { return r.j.Spec.Suspend }

// Suspend sets spec.suspend.
func (r *JobV1alpha1) Suspend() { r.j.Spec.Suspend = true }

// Resume clears spec.suspend.
func (r *JobV1alpha1) Resume() { r.j.Spec.Suspend = false }

// PodSets is the cluster's head and worker groups.
func (r *JobV1alpha1) PodSets() ([]framework.PodSet, error) {
	cs := r.j.Spec.RayClusterSpec
	if cs == nil {
		return nil, errNoClusterSpec
	}
	groups := make([]raycluster.Group, 0, len(cs.WorkerGroupSpecs))
	for i := range cs.WorkerGroupSpecs {
		s := &cs.WorkerGroupSpecs[i]
		groups = append(groups, raycluster.Group{
			Name: s.GroupName, Replicas: s.Replicas, MinReplicas: s.MinReplicas, MaxReplicas: s.MaxReplicas, Template: &s.Template,
		})
	}
	return raycluster.PodSets(&cs.HeadGroupSpec.Template, groups)
}

// Status follows status.jobDeploymentStatus.
func (r *JobV1alpha1) Status() framework.JobStatus {
	var st framework.JobStatus
	switch string(r.j.Status.JobDeploymentStatus) {
	case "Complete", "Failed":
		st.Finished = true
		st.Failed = r.j.Status.JobStatus != rayv1alpha1.JobStatusSucceeded
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
