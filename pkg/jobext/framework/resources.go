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

package framework

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
)

// PodSetRequests is count times the pod set's effective pod demand.
func PodSetRequests(ps *PodSet) corev1.ResourceList {
	return Scale(resources.PodRequests(&ps.Template.Spec), ps.Count)
}

// TotalRequests sums every pod set's demand.
func TotalRequests(sets []PodSet) corev1.ResourceList {
	total := corev1.ResourceList{}
	for i := range sets {
		addTo(total, PodSetRequests(&sets[i]))
	}
	return total
}

// Scale multiplies every quantity by n.
func Scale(list corev1.ResourceList, n int32) corev1.ResourceList {
	return resources.Scale(list, int64(n))
}

func addTo(into, add corev1.ResourceList) {
	for name, q := range add {
		cur := into[name]
		cur.Add(q)
		into[name] = cur
	}
}
