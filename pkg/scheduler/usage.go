package scheduler

import (
	"fmt"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
)

// invalidRequest says why a unit's demand cannot be counted (a negative
// amount, or one beyond resources.MaxAmount once multiplied and summed), or
// nil. Such a unit is never admitted.
func invalidRequest(u *schedv1alpha1.QueueUnit) error {
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
