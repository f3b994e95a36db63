package scheduler

import (
	"fmt"

	"github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
)

// invalidRequest says why a unit's demand cannot be counted (a negative
// amount, or one beyond resources.MaxAmount once multiplied and summed), or
// nil. Such a unit is never admitted.
func invalidRequest(u *v1alpha1.QueueUnit) error {
	if _, err := quota.FromListChecked(u.Spec.Resource); err != nil {
		return fmt.Errorf("spec.resource: %w", err)
	}
	d := resources.Demand{}
	for i := range u.Spec.PodSet {
		ps := &u.Spec.PodSet[i]
		if err := d.Add(fmt.Sprintf("spec.podSet[%s]", ps.Name), resources.PodRequests(&ps.Template.Spec), int64(ps.Count)); err != nil {
			return err
		}
	}
	return nil
}

// admissionsFor is what an admitted unit records per pod set. A unit without
// pod sets is one replica of its whole request.
func admissionsFor(u *v1alpha1.QueueUnit) []v1alpha1.Admission {
	if len(u.Spec.PodSet) == 0 {
		return []v1alpha1.Admission{{Name: "default", Replicas: 1, Resources: queueunit.Request(u).ToList()}}
	}
	out := make([]v1alpha1.Admission, 0, len(u.Spec.PodSet))
	for i := range u.Spec.PodSet {
		ps := &u.Spec.PodSet[i]
		out = append(out, v1alpha1.Admission{Name: ps.Name, Replicas: ps.Count, Resources: resources.PodRequests(&ps.Template.Spec)})
	}
	// When spec.resource says more than the pod sets add up to (a job type
	// whose pods are not all in its sets), charge what the job says.
	if total := queueunit.Request(u); !total.Equal(sumAdmissions(out)) && len(u.Spec.Resource) > 0 {
		return []v1alpha1.Admission{{Name: "default", Replicas: 1, Resources: total.ToList()}}
	}
	return out
}

func sumAdmissions(as []v1alpha1.Admission) quota.Resources {
	var total quota.Resources
	for _, a := range as {
		total = total.Add(quota.FromList(a.Resources).Scale(int64(a.Replicas)))
	}
	return total
}
