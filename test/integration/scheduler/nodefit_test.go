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
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/app"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// createNode makes a node with allocatable cpu (and 256Gi memory), and
// removes it when the test ends.
func createNode(t *testing.T, name, cpu string, taints ...corev1.Taint) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Spec: corev1.NodeSpec{Taints: taints}}
	create(t, n)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), n) })
	n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("256Gi")}
	n.Status.Capacity = n.Status.Allocatable
	if err := env.Client.Status().Update(ctx(), n); err != nil {
		t.Fatal(err)
	}
}

// podUnit is a unit of one pod set of count pods, each requesting cpu.
func podUnit(ns, name, quotaName, cpu string, count int32, tolerations ...corev1.Toleration) *schedv1alpha1.QueueUnit {
	u := utiltesting.MakeQueueUnit(name, ns).Quota(quotaName).Obj()
	u.Spec.PodSet = []schedv1alpha1.PodSet{{Name: "worker", Count: count, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Tolerations: tolerations,
		Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
	}}}}
	return u
}

// A unit whose pod is bigger than every node it may run on is not admitted,
// however much quota it has, and says so; a node that can take it lets it
// in without a restart. Taints count: a bigger tainted node helps only a pod
// that tolerates it.
func TestUnitThatFitsNoNodeWaits(t *testing.T) {
	const ns, q = "nodefit", "nodefit"
	reg := prometheus.NewRegistry()
	startScheduler(t, func(o *app.Options) { o.MetricsRegistry = reg })
	createNamespace(t, ns)
	createNode(t, "nodefit-32", "32")
	createNode(t, "nodefit-tainted-64", "64", corev1.Taint{Key: "dedicated", Value: "big", Effect: corev1.TaintEffectNoSchedule})
	create(t, utiltesting.MakeElasticQuota(q).Namespace(ns).Max("cpu", "1000").Obj())

	create(t, podUnit(ns, "too-big", q, "64", 1))
	create(t, podUnit(ns, "fits", q, "16", 4))
	create(t, podUnit(ns, "tolerates", q, "64", 1, corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "big", Effect: corev1.TaintEffectNoSchedule}))
	waitPhase(t, ns, "fits", schedv1alpha1.QueueUnitPhaseDequeued)
	waitPhase(t, ns, "tolerates", schedv1alpha1.QueueUnitPhaseDequeued)
	u := waitMessage(t, ns, "too-big")
	want := "can never fit on any node: largest node has 32 cpu, a pod of pod set worker requests 64 cpu"
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued || u.Status.Message != want {
		t.Fatalf("too-big: phase %s, message %q; want Enqueued with %q", u.Status.Phase, u.Status.Message, want)
	}
	if err := framework.Eventually(ctx(), 10*time.Second, func(context.Context) (bool, error) {
		return hasEvent(t, ns, "too-big", "FailedScheduling", "can never fit on any node"), nil
	}); err != nil {
		t.Errorf("no FailedScheduling event naming the node misfit")
	}
	// The alert's metric counts it under its reason.
	waiting := `koord_queue_pending_units_by_reason{queue="nodefit",quota="nodefit",reason="NoNodeFits"}`
	if got := metricValue(t, reg, waiting); got != 1 {
		t.Errorf("%s = %v, want 1", waiting, got)
	}
	// A big enough node arrives: the unit is admitted, nothing else changed.
	createNode(t, "nodefit-96", "96")
	waitPhase(t, ns, "too-big", schedv1alpha1.QueueUnitPhaseDequeued)
	if got := metricValue(t, reg, waiting); got != 0 {
		t.Errorf("%s = %v once admitted, want 0", waiting, got)
	}
}

// With --node-fit-check=false the unit is admitted on quota alone, and its
// Scheduled event says the check was skipped.
func TestNodeFitCheckOff(t *testing.T) {
	const ns, q = "nodefit-off", "nodefit-off"
	startScheduler(t, func(o *app.Options) { o.NodeFitCheck = false })
	createNamespace(t, ns)
	createNode(t, "nodefit-off-8", "8")
	create(t, utiltesting.MakeElasticQuota(q).Namespace(ns).Max("cpu", "1000").Obj())
	create(t, podUnit(ns, "huge", q, "64", 1))
	waitPhase(t, ns, "huge", schedv1alpha1.QueueUnitPhaseDequeued)
	if err := framework.Eventually(ctx(), 10*time.Second, func(context.Context) (bool, error) {
		return hasEvent(t, ns, "huge", "Scheduled", "node fit check skipped"), nil
	}); err != nil {
		t.Errorf("Scheduled event does not say the node fit check was skipped")
	}
}
