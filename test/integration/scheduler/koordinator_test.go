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
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// runPod creates a pod bound to a node and reports it Running, as the
// kubelet would: what koord-scheduler counts as a quota's usage.
func runPod(t *testing.T, ns, name, cpus string, labels map[string]string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpus)}}}}},
	}
	create(t, pod)
	pod.Status.Phase = corev1.PodRunning
	if err := env.Client.Status().Update(ctx(), pod); err != nil {
		t.Fatalf("report pod %s/%s running: %v", ns, name, err)
	}
}

// The case: a plain 2-CPU pod of team-a runs; a 4-CPU unit of
// team-a (max 4) waits and says the plain pod is why, and is admitted once
// the pod is gone. Without the pod's usage in the book, the unit would be
// admitted and koord-scheduler would refuse its pods.
func TestPlainPodHoldsBackAUnitOfItsQuota(t *testing.T) {
	const ns, q = "plain-pod", "plain-pod"
	startScheduler(t)
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota(q).Namespace(ns).Max("cpu", "4").Obj())
	waitQueue(t, q)
	runPod(t, ns, "plain", "2", map[string]string{schedv1alpha1.QuotaNameLabel: q})
	create(t, utiltesting.MakeQueueUnit("big", ns).Quota(q).Request("cpu", "4").Obj())
	u := waitMessage(t, ns, "big")
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued || !strings.Contains(u.Status.Message, "(used 2 of which 2 by pods koord-queue does not manage, min 0, max 4)") {
		t.Fatalf("big: phase %s, message %q; want Enqueued, naming the 2 CPUs of pods koord-queue does not manage", u.Status.Phase, u.Status.Message)
	}
	if err := env.Client.Delete(ctx(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"}},
		client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, ns, "big", schedv1alpha1.QueueUnitPhaseDequeued)
}

// The pods of an admitted unit are its own: they are not counted a second
// time, so a unit that fits beside it is admitted.
func TestUnitPodsAreCountedOnce(t *testing.T) {
	const ns, q = "own-pods", "own-pods"
	startScheduler(t)
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota(q).Namespace(ns).Max("cpu", "5").Obj())
	runFakeExtension(t, ns)
	create(t, utiltesting.MakeQueueUnit("first", ns).Quota(q).Request("cpu", "4").Obj())
	waitPhase(t, ns, "first", schedv1alpha1.QueueUnitPhaseRunning)
	for _, name := range []string{"first-0", "first-1"} {
		runPod(t, ns, name, "2", map[string]string{schedv1alpha1.QuotaNameLabel: q, schedv1alpha1.QueueUnitLabel: "first"})
	}
	// A plain 1-CPU pod fills the quota: 4 + 1 = 5. The next unit waits,
	// and the reason counts the plain pod only.
	runPod(t, ns, "plain", "1", map[string]string{schedv1alpha1.QuotaNameLabel: q})
	create(t, utiltesting.MakeQueueUnit("second", ns).Quota(q).Request("cpu", "1").Obj())
	u := waitMessage(t, ns, "second")
	if !strings.Contains(u.Status.Message, "(used 5 of which 1 by pods koord-queue does not manage, min 0, max 5)") {
		t.Errorf("second says %q; want used 5, of which 1 cpu by pods koord-queue does not manage", u.Status.Message)
	}
	if err := env.Client.Delete(ctx(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"}},
		client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	// 4 of the unit + 1 = 5: admitted. Counted twice (4 + 4 + 1) it would wait.
	waitPhase(t, ns, "second", schedv1alpha1.QueueUnitPhaseRunning)
}

// Koordinator's own quotas get no Queue and take no unit; a parent quota
// takes no unit either; each says so in the unit's condition.
func TestKoordinatorsOwnAndParentQuotasTakeNoUnit(t *testing.T) {
	const ns = "koord-own"
	startScheduler(t)
	createNamespace(t, ns)
	createNamespace(t, eqv1alpha1.SystemQuotaNamespace)
	create(t, utiltesting.MakeElasticQuota(eqv1alpha1.DefaultQuotaName).Namespace(eqv1alpha1.SystemQuotaNamespace).
		Max("cpu", "1000").Obj())
	create(t, utiltesting.MakeElasticQuota("ko-parent").Namespace(ns).IsParent(true).Max("cpu", "8").Obj())
	// One worker follows the quotas in order: once the parent's Queue is
	// there, the default quota was looked at before it.
	waitQueue(t, "ko-parent")
	err := env.Client.Get(ctx(), client.ObjectKey{Namespace: schedv1alpha1.QueueNamespace, Name: eqv1alpha1.DefaultQuotaName}, &schedv1alpha1.Queue{})
	if err == nil {
		t.Errorf("Koordinator's %s got a Queue", eqv1alpha1.DefaultQuotaName)
	} else if client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	create(t, utiltesting.MakeQueueUnit("to-default", ns).Quota(eqv1alpha1.DefaultQuotaName).Request("cpu", "1").Obj())
	create(t, utiltesting.MakeQueueUnit("to-parent", ns).Quota("ko-parent").Request("cpu", "1").Obj())
	for name, want := range map[string]string{"to-default": "SystemQuota", "to-parent": "ParentQuota"} {
		u := waitMessage(t, ns, name)
		c := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionQuotaReserved)
		if u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued || c == nil || c.Reason != want {
			t.Errorf("%s: phase %s, condition %+v, message %q; want Enqueued with reason %s", name, u.Status.Phase, c, u.Status.Message, want)
		}
	}
}
