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

	"k8s.io/apimachinery/pkg/runtime"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/app"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

func relabel(t *testing.T, ns, name, quotaName string) {
	t.Helper()
	update(t, &schedv1alpha1.QueueUnit{}, ns, name, func(u *schedv1alpha1.QueueUnit) { u.Labels[schedv1alpha1.QuotaNameLabel] = quotaName })
}

// The attack: relabel a running unit to another quota (or to one that does
// not exist) and admit a second unit into the first quota. The relabelled
// unit stays charged where it was admitted, also across a restart, and the
// second unit waits until it finishes.
func TestRelabelledUnitKeepsItsQuota(t *testing.T) {
	const ns = "relabel"
	stop := startScheduler(t)
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota("rl-a").Namespace(ns).Max("cpu", "2").Obj())
	create(t, utiltesting.MakeElasticQuota("rl-b").Namespace(ns).Max("cpu", "10").Obj())
	create(t, utiltesting.MakeQueueUnit("first", ns).Quota("rl-a").Request("cpu", "2").Obj())
	u := waitPhase(t, ns, "first", schedv1alpha1.QueueUnitPhaseDequeued)
	if u.Status.Quota != "rl-a" {
		t.Errorf("admission records quota %q, want rl-a", u.Status.Quota)
	}
	setPhase(t, ns, "first", schedv1alpha1.QueueUnitPhaseRunning)
	for _, target := range []string{"rl-b", "rl-nowhere"} {
		relabel(t, ns, "first", target)
		if err := framework.Eventually(ctx(), 10*time.Second, func(context.Context) (bool, error) {
			return len(events(t, ns, "first", "QuotaChangeIgnored")) > 0, nil
		}); err != nil {
			t.Errorf("no QuotaChangeIgnored event after relabelling to %s", target)
		}
	}
	create(t, utiltesting.MakeQueueUnit("second", ns).Quota("rl-a").Request("cpu", "2").Obj())
	waitMessage(t, ns, "second")
	if p := getUnit(t, ns, "second").Status.Phase; p != schedv1alpha1.QueueUnitPhaseEnqueued {
		t.Fatalf("second is %s: the relabelled unit's quota was given away", p)
	}
	// A restarted scheduler reads the charge from the admission, not the label.
	stop()
	startScheduler(t)
	create(t, utiltesting.MakeQueueUnit("third", ns).Quota("rl-a").Request("cpu", "2").Obj())
	waitPhase(t, ns, "third", schedv1alpha1.QueueUnitPhaseEnqueued)
	if p := getUnit(t, ns, "second").Status.Phase; p != schedv1alpha1.QueueUnitPhaseEnqueued {
		t.Fatalf("after a restart second is %s", p)
	}
	setPhase(t, ns, "first", schedv1alpha1.QueueUnitPhaseSucceed)
	waitPhase(t, ns, "second", schedv1alpha1.QueueUnitPhaseDequeued)
}

// The attack: a namespace labels its unit with another team's quota. It
// waits and says why; the quota listing the namespace, or sharedQuotas,
// lets it in.
func TestForeignQuotaIsRefused(t *testing.T) {
	const owner, tenant = "tenancy-owner", "tenancy-tenant"
	startScheduler(t)
	createNamespace(t, owner)
	createNamespace(t, tenant)
	create(t, utiltesting.MakeElasticQuota("owned").Namespace(owner).Max("cpu", "10").Obj())
	create(t, utiltesting.MakeQueueUnit("mine", owner).Quota("owned").Request("cpu", "1").Obj())
	waitPhase(t, owner, "mine", schedv1alpha1.QueueUnitPhaseDequeued)
	create(t, utiltesting.MakeQueueUnit("intruder", tenant).Quota("owned").Request("cpu", "1").Obj())
	u := waitMessage(t, tenant, "intruder")
	want := "namespace tenancy-tenant may not use quota owned (in namespace tenancy-owner)"
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued || !strings.Contains(u.Status.Message, want) {
		t.Fatalf("intruder: phase %s, message %q; want Enqueued with %q", u.Status.Phase, u.Status.Message, want)
	}
	if err := framework.Eventually(ctx(), 10*time.Second, func(context.Context) (bool, error) {
		return len(events(t, tenant, "intruder", "FailedScheduling")) > 0, nil
	}); err != nil {
		t.Error("no warning event on the refused unit")
	}
	patchQuota(t, owner, "owned", func(eq *eqv1alpha1.ElasticQuota) {
		eq.Annotations = map[string]string{eqv1alpha1.NamespacesAnnotation: `["` + tenant + `"]`}
	})
	waitPhase(t, tenant, "intruder", schedv1alpha1.QueueUnitPhaseDequeued)
}

func TestSharedQuotasLetsAnyNamespaceIn(t *testing.T) {
	const owner, tenant = "shared-owner", "shared-tenant"
	startScheduler(t, func(o *app.Options) {
		o.Config.PluginConfigs = append(o.Config.PluginConfigs, configv1.PluginConfig{
			Name: configv1.PluginElasticQuotaV2, Args: runtime.RawExtension{Raw: []byte(`{"sharedQuotas":true}`)}})
	})
	createNamespace(t, owner)
	createNamespace(t, tenant)
	create(t, utiltesting.MakeElasticQuota("everyones").Namespace(owner).Max("cpu", "10").Obj())
	create(t, utiltesting.MakeQueueUnit("guest", tenant).Quota("everyones").Request("cpu", "1").Obj())
	waitPhase(t, tenant, "guest", schedv1alpha1.QueueUnitPhaseDequeued)
}

// The attack: a tenant writes a huge priority on its job to preempt the
// quota's other work. The quota's koord-queue/max-priority bounds it: at the
// ceiling it outranks nobody at the ceiling; raising the ceiling lets it.
func TestPriorityCeiling(t *testing.T) {
	const ns, q = "ceiling", "ceiling"
	startScheduler(t, noProtection)
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota(q).Namespace(ns).Max("cpu", "4").
		Annotation(schedv1alpha1.PreemptionPolicyAnnotation, string(schedv1alpha1.PreemptionLowerPriority)).
		Annotation(schedv1alpha1.MaxPriorityAnnotation, "10").Obj())
	runFakeExtension(t, ns)
	create(t, utiltesting.MakeQueueUnit("regular", ns).Quota(q).Priority(10).Request("cpu", "4").Obj())
	waitPhase(t, ns, "regular", schedv1alpha1.QueueUnitPhaseRunning)
	create(t, utiltesting.MakeQueueUnit("pushy", ns).Quota(q).Priority(1000000).Request("cpu", "4").Obj())
	waitMessage(t, ns, "pushy")
	if r := getUnit(t, ns, "regular"); r.Status.Phase != schedv1alpha1.QueueUnitPhaseRunning || len(events(t, ns, "regular", "Preempted")) > 0 {
		t.Fatalf("a priority above the ceiling preempted a unit at the ceiling (regular is %s)", r.Status.Phase)
	}
	patchQuota(t, ns, q, func(eq *eqv1alpha1.ElasticQuota) { eq.Annotations[schedv1alpha1.MaxPriorityAnnotation] = "2000000" })
	waitPhase(t, ns, "pushy", schedv1alpha1.QueueUnitPhaseRunning)
}
