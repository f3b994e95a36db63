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

package queueunit

import (
	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
)

// Request is a unit's whole demand: spec.resource when set, else the sum over
// its pod sets of count x the template's effective requests.
func Request(u *schedv1alpha1.QueueUnit) schedtypes.Resources {
	if len(u.Spec.Resource) > 0 {
		return schedtypes.FromList(u.Spec.Resource)
	}
	var total schedtypes.Resources
	for i := range u.Spec.PodSet {
		ps := &u.Spec.PodSet[i]
		total = total.Add(schedtypes.FromList(resources.PodRequests(&ps.Template.Spec)).Scale(int64(ps.Count)))
	}
	return total
}

// Usage is what a unit holds: nothing unless its phase holds quota; then the
// sum over its admissions of (replicas less the pods that finished, from
// reclaimablePods) x resources, or its whole request when it records no
// admission. A unit being deleted keeps its charge until it is gone.
func Usage(u *schedv1alpha1.QueueUnit) schedtypes.Resources {
	if !HoldsQuota(u.Status.Phase) {
		return nil
	}
	if len(u.Status.Admissions) == 0 {
		return Request(u)
	}
	done := map[string]int32{}
	for _, rp := range u.Status.ReclaimablePods {
		done[rp.Name] = rp.Count
	}
	var total schedtypes.Resources
	for _, a := range u.Status.Admissions {
		if n := int64(a.Replicas - done[a.Name]); n > 0 {
			total = total.Add(schedtypes.FromList(a.Resources).Scale(n))
		}
	}
	return total
}
