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
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// Preemption inside a quota is opt-in: by default a higher-priority unit
// waits for a running one; once the quota says LowerPriority it preempts.
func TestPreemptionIsOptIn(t *testing.T) {
	const ns, q = "optin", "optin"
	startScheduler(t, noProtection)
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota(q).Namespace(ns).Max("cpu", "4").Obj())
	runFakeExtension(t, ns)

	create(t, utiltesting.MakeQueueUnit("low", ns).Quota(q).Priority(0).Request("cpu", "2").Obj())
	waitPhase(t, ns, "low", schedv1alpha1.QueueUnitPhaseRunning)
	create(t, utiltesting.MakeQueueUnit("high", ns).Quota(q).Priority(100).Request("cpu", "4").Obj())
	// The pass that refused high is over once high says why it waits.
	u := waitMessage(t, ns, "high")
	if !strings.Contains(u.Status.Message, "insufficient quota") {
		t.Errorf("high waits with %q, want the quota shortage", u.Status.Message)
	}
	low := getUnit(t, ns, "low")
	if low.Status.Phase != schedv1alpha1.QueueUnitPhaseRunning || meta.IsStatusConditionTrue(low.Status.Conditions, schedv1alpha1.ConditionEvicted) {
		t.Fatalf("low was preempted by default: phase %s, conditions %v", low.Status.Phase, low.Status.Conditions)
	}
	if n := len(events(t, ns, "low", "Preempted")); n != 0 {
		t.Fatalf("%d Preempted events on low by default", n)
	}

	// Opting in on the quota reaches its auto-created Queue; high preempts.
	patchQuota(t, ns, q, func(eq *eqv1alpha1.ElasticQuota) {
		eq.Annotations = map[string]string{schedv1alpha1.PreemptionPolicyAnnotation: string(schedv1alpha1.PreemptionLowerPriority)}
	})
	waitPhase(t, ns, "high", schedv1alpha1.QueueUnitPhaseRunning)
	low = getUnit(t, ns, "low")
	if c := meta.FindStatusCondition(low.Status.Conditions, schedv1alpha1.ConditionEvicted); c == nil || c.Reason != schedv1alpha1.ReasonPreempted {
		t.Errorf("low's Evicted condition = %+v, want Preempted", c)
	}
}

func patchQuota(t *testing.T, ns, name string, mutate func(*eqv1alpha1.ElasticQuota)) {
	t.Helper()
	update(t, &eqv1alpha1.ElasticQuota{}, ns, name, mutate)
}

// Reclaim of borrowed capacity works for a quota served by an Intelligent queue.
func TestReclaimForIntelligentQueue(t *testing.T) {
	const ns = "reclaim-intelligent"
	startScheduler(t, noProtection)
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota("ri-parent").Namespace(ns).Max("cpu", "4").Obj())
	create(t, utiltesting.MakeElasticQuota("ri-a").Namespace(ns).Parent("ri-parent").Min("cpu", "2").Max("cpu", "4").Obj())
	create(t, utiltesting.MakeElasticQuota("ri-b").Namespace(ns).Parent("ri-parent").Min("cpu", "2").Max("cpu", "4").
		Policy(schedv1alpha1.QueuePolicyIntelligent).Obj())
	runFakeExtension(t, ns)
	for _, name := range []string{"a-0", "a-1"} {
		create(t, utiltesting.MakeQueueUnit(name, ns).Quota("ri-a").Request("cpu", "2").Obj())
		waitPhase(t, ns, name, schedv1alpha1.QueueUnitPhaseRunning)
	}
	// Both bands of the Intelligent queue reclaim their min.
	create(t, utiltesting.MakeQueueUnit("b-high", ns).Quota("ri-b").Priority(10).Request("cpu", "1").Obj())
	create(t, utiltesting.MakeQueueUnit("b-low", ns).Quota("ri-b").Priority(0).Request("cpu", "1").Obj())
	waitPhase(t, ns, "b-high", schedv1alpha1.QueueUnitPhaseRunning)
	waitPhase(t, ns, "b-low", schedv1alpha1.QueueUnitPhaseRunning)
}

// Only Queues in namespace koord-queue are served: a same-named Queue
// elsewhere neither changes the auto-created Queue's policy and checks nor,
// when deleted, strands its units.
func TestSameNamedQueueElsewhereIsHarmless(t *testing.T) {
	const ns, q = "queue-identity", "identity"
	startScheduler(t)
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota(q).Namespace(ns).Max("cpu", "4").Obj())
	waitQueue(t, q)
	stray := &schedv1alpha1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: q, Namespace: ns},
		Spec: schedv1alpha1.QueueSpec{QueuePolicy: schedv1alpha1.QueuePolicyBlock,
			AdmissionChecks: []schedv1alpha1.AdmissionCheckWithSelector{{Name: "never-answered"}}},
	}
	create(t, stray)
	if err := framework.Eventually(ctx(), 20*time.Second, func(c context.Context) (bool, error) {
		list := &corev1.EventList{}
		if err := env.Client.List(c, list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == "Queue" && e.InvolvedObject.Name == q && e.Reason == "QueueIgnored" && e.Type == corev1.EventTypeWarning {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("no QueueIgnored warning on the stray Queue: %v", err)
	}
	// The stray Queue's checks do not apply: the unit is dequeued directly.
	create(t, utiltesting.MakeQueueUnit("one", ns).Quota(q).Request("cpu", "1").Obj())
	if u := waitPhase(t, ns, "one", schedv1alpha1.QueueUnitPhaseDequeued); len(u.Status.AdmissionChecks) != 0 {
		t.Errorf("unit got the stray Queue's checks: %+v", u.Status.AdmissionChecks)
	}
	// Deleting the stray Queue strands nothing.
	if err := env.Client.Delete(ctx(), stray); err != nil {
		t.Fatal(err)
	}
	create(t, utiltesting.MakeQueueUnit("two", ns).Quota(q).Request("cpu", "1").Obj())
	waitPhase(t, ns, "two", schedv1alpha1.QueueUnitPhaseDequeued)
}

func waitQueue(t *testing.T, name string) {
	t.Helper()
	if err := framework.Eventually(ctx(), 20*time.Second, func(c context.Context) (bool, error) {
		err := env.Client.Get(c, client.ObjectKey{Namespace: schedv1alpha1.QueueNamespace, Name: name}, &schedv1alpha1.Queue{})
		return err == nil, client.IgnoreNotFound(err)
	}); err != nil {
		t.Fatalf("queue %s not created: %v", name, err)
	}
}

// Units of a quota whose parent is missing, or that sits in a cycle, wait
// and say why; the quota gets one InvalidQuotaTree warning; fixing the tree
// admits them without a restart.
func TestBrokenQuotaTreeWaits(t *testing.T) {
	const ns = "broken-tree"
	startScheduler(t)
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota("orphan").Namespace(ns).Parent("bt-missing").Max("cpu", "4").Obj())
	create(t, utiltesting.MakeElasticQuota("cyc-a").Namespace(ns).Parent("cyc-b").Max("cpu", "4").Obj())
	create(t, utiltesting.MakeElasticQuota("cyc-b").Namespace(ns).Parent("cyc-a").Max("cpu", "4").Obj())
	for _, q := range []string{"orphan", "cyc-a", "cyc-b"} {
		waitQueue(t, q)
		create(t, utiltesting.MakeQueueUnit("u-"+q, ns).Quota(q).Request("cpu", "1").Obj())
	}
	want := map[string]string{
		"orphan": "the parent bt-missing of quota orphan does not exist",
		"cyc-a":  "would make a cycle",
		"cyc-b":  "would make a cycle",
	}
	for q, msg := range want {
		u := waitMessage(t, ns, "u-"+q)
		if u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued || !strings.Contains(u.Status.Message, "invalid quota tree") || !strings.Contains(u.Status.Message, msg) {
			t.Errorf("u-%s: phase %s, message %q; want Enqueued with %q", q, u.Status.Phase, u.Status.Message, msg)
		}
	}
	for _, q := range []string{"orphan", "cyc-b"} {
		if err := framework.Eventually(ctx(), 20*time.Second, func(context.Context) (bool, error) {
			return len(events(t, ns, q, "InvalidQuotaTree")) == 1, nil
		}); err != nil {
			t.Errorf("quota %s: %d InvalidQuotaTree events, want 1", q, len(events(t, ns, q, "InvalidQuotaTree")))
		}
	}
	// Fix both: the missing parent arrives, the cycle is cut.
	create(t, utiltesting.MakeElasticQuota("bt-missing").Namespace(ns).Max("cpu", "8").Obj())
	patchQuota(t, ns, "cyc-a", func(eq *eqv1alpha1.ElasticQuota) { delete(eq.Labels, eqv1alpha1.ParentLabel) })
	// cyc-a is now cyc-b's parent: its unit is refused as a parent quota's.
	for _, q := range []string{"orphan", "cyc-b"} {
		waitPhase(t, ns, "u-"+q, schedv1alpha1.QueueUnitPhaseDequeued)
	}
	waitReason(t, ns, "u-cyc-a", "ParentQuota", `quota cyc-a is a parent quota (it has child quotas or the label quota.scheduling.koordinator.sh/is-parent: "true"), `+
		`and Koordinator schedules no pod charged to a parent quota: label the job with quota.scheduling.koordinator.sh/name naming a leaf quota`)
	for _, q := range []string{"orphan", "cyc-b"} {
		if n := len(events(t, ns, q, "InvalidQuotaTree")); n != 1 {
			t.Errorf("quota %s: %d InvalidQuotaTree events, want exactly 1", q, n)
		}
	}
}

// A unit with no quota says what to add: the label on its job, or a default
// quota for koord-queue-controllers.
func TestUnitWithoutQuotaSaysWhatToAdd(t *testing.T) {
	const ns = "no-quota"
	startScheduler(t)
	createNamespace(t, ns)
	create(t, utiltesting.MakeQueueUnit("homeless", ns).Request("cpu", "1").Obj())
	u := waitMessage(t, ns, "homeless")
	for _, want := range []string{"no quota", "add the label " + schedv1alpha1.QuotaNameLabel + " to the job", "--default-quota"} {
		if !strings.Contains(u.Status.Message, want) {
			t.Errorf("message %q does not say %q", u.Status.Message, want)
		}
	}
}
