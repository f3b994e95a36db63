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
	"testing"

	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// A queue of higher priority gets first claim on shared parent quota; a
// Queue without spec.priority takes it from its priorityClassName.
func TestQueuePriorityFromPriorityClass(t *testing.T) {
	const ns = "queueprio"
	createNamespace(t, ns)
	createNamespace(t, "koord-queue")
	create(t, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "queueprio-high"}, Value: 5000})
	q := utiltesting.MakeQueue("qp-high").Obj()
	q.Spec.Priority = nil
	q.Spec.PriorityClassName = "queueprio-high"
	create(t, q)
	create(t, utiltesting.MakeElasticQuota("qp-parent").Namespace(ns).Max("cpu", "1").Obj(),
		utiltesting.MakeElasticQuota("qp-low").Namespace(ns).Parent("qp-parent").Obj(),
		utiltesting.MakeElasticQuota("qp-high").Namespace(ns).Parent("qp-parent").Obj())
	// Both units wait before the scheduler starts; the low queue's is older.
	create(t, utiltesting.MakeQueueUnit("from-low", ns).Quota("qp-low").Request("cpu", "1").Obj())
	create(t, utiltesting.MakeQueueUnit("from-high", ns).Quota("qp-high").Request("cpu", "1").Obj())
	startScheduler(t)
	waitPhase(t, ns, "from-high", schedv1alpha1.QueueUnitPhaseDequeued)
	if p := getUnit(t, ns, "from-low").Status.Phase; p == schedv1alpha1.QueueUnitPhaseDequeued {
		t.Errorf("the priority-1000 queue's unit was admitted before the priority-5000 queue's")
	}
}
