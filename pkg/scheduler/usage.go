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

package scheduler

import (
	"fmt"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
)

// invalidRequest says why a unit's demand cannot be counted (a negative
// amount, or one beyond resources.MaxAmount once multiplied and summed), or
// nil. Such a unit is never admitted.
func invalidRequest(u *schedv1alpha1.QueueUnit) error {
	if _, err := schedtypes.FromListChecked(u.Spec.Resource); err != nil {
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
