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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
)

// The unit's status follows the rules of pkg/queueunit, which owns the
// protocol; this file only adapts the job's report to it.

// reportPods writes the job's pod counts into the unit (queueunit.ReportPods).
func reportPods(unit *schedv1alpha1.QueueUnit, status JobStatus, now metav1.Time) {
	pods := make([]queueunit.PodSetPods, 0, len(status.PodSets))
	for _, ps := range status.PodSets {
		pods = append(pods, queueunit.PodSetPods{Name: ps.Name, Running: ps.Running, Pending: ps.Pending, Finished: ps.Finished})
	}
	queueunit.ReportPods(unit, pods, now)
}
