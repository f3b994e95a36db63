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
