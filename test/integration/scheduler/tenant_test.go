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
	"math"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// Issue 32, part 3: a tenant cannot stall or reorder others.

// podsGoneFinalizer is the finalizer koord-queue-controllers puts on every
// unit it makes (docs/protocol.md, "Deletion").
const podsGoneFinalizer = "scheduling.x-k8s.io/pods-gone"

// tenantClient is a client for user name bound, in namespace ns, to what the
// chart's koord-queue-edit role grants on QueueUnits (the edit role of a
// namespace).
func tenantClient(t *testing.T, ns, name string) client.Client {
	t.Helper()
	create(t,
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-edit"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{schedv1alpha1.GroupVersion.Group}, Resources: []string{"queueunits"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"},
		}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-edit"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name + "-edit"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: name}}})
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: name, Groups: []string{"system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// pendingPod creates a pod its scheduler has not bound yet: created by the
// job's controller, not running anywhere so far.
func pendingPod(t *testing.T, ns, name, cpus string, labels map[string]string) {
	t.Helper()
	create(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpus)}}}}},
	})
}

// A tenant with the edit role strips the pods-gone finalizer from the unit
// of its running job and deletes the unit. The job's pods still exist (one
// running, one not bound yet), so the quota they were admitted with stays
// charged until they are gone: another unit of the quota waits meanwhile.
func TestDeletedUnitKeepsChargeWhileItsPodsRun(t *testing.T) {
	const ns, q = "strip-finalizer", "strip-finalizer"
	startScheduler(t)
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota(q).Namespace(ns).Max("cpu", "4").Obj())
	runFakeExtension(t, ns)
	first := utiltesting.MakeQueueUnit("first", ns).Quota(q).Request("cpu", "4").Obj()
	first.Finalizers = []string{podsGoneFinalizer}
	create(t, first)
	waitPhase(t, ns, "first", schedv1alpha1.QueueUnitPhaseRunning)
	labels := map[string]string{schedv1alpha1.QuotaNameLabel: q, schedv1alpha1.QueueUnitLabel: "first"}
	runPod(t, ns, "first-0", "2", labels)
	pendingPod(t, ns, "first-1", "2", labels)

	tenant := tenantClient(t, ns, "mallory")
	if err := framework.Eventually(ctx(), 10*time.Second, func(c context.Context) (bool, error) {
		u := &schedv1alpha1.QueueUnit{}
		if err := tenant.Get(c, client.ObjectKey{Namespace: ns, Name: "first"}, u); err != nil {
			return false, err
		}
		u.Finalizers = nil
		return true, tenant.Update(c, u)
	}); err != nil {
		t.Fatalf("the tenant strips the finalizer: %v", err)
	}
	if err := tenant.Delete(ctx(), &schedv1alpha1.QueueUnit{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "first"}}); err != nil {
		t.Fatalf("the tenant deletes the unit: %v", err)
	}
	if err := framework.Eventually(ctx(), 10*time.Second, func(c context.Context) (bool, error) {
		err := env.Client.Get(c, client.ObjectKey{Namespace: ns, Name: "first"}, &schedv1alpha1.QueueUnit{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	}); err != nil {
		t.Fatalf("first is not gone: %v", err)
	}

	// 4 CPUs of first's pods are still there (2 running, 2 to be bound):
	// nothing fits beside them.
	create(t, utiltesting.MakeQueueUnit("second", ns).Quota(q).Request("cpu", "2").Obj())
	u := waitMessage(t, ns, "second")
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued || !strings.Contains(u.Status.Message, "insufficient quota") {
		dump(t, ns)
		t.Fatalf("second is %s (%q) while the pods of the deleted unit first are there; want Enqueued for insufficient quota", u.Status.Phase, u.Status.Message)
	}
	// The pods go: so does the charge.
	for _, name := range []string{"first-0", "first-1"} {
		if err := env.Client.Delete(ctx(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
	}
	waitPhase(t, ns, "second", schedv1alpha1.QueueUnitPhaseRunning)
}

// Two tenants borrow from their parent: rich (namespace reclaim-rich) with
// two units of priority 2^31-1, poor (reclaim-poor) with one of priority 0.
// A third quota reclaims its min. Priority is each tenant's own to set, so it
// orders victims only inside their quota: the room is taken back from the
// quota that borrows most (rich, 4 CPUs above its min against poor's 1), not
// from the unit of lowest priority cluster-wide.
func TestReclaimDoesNotFollowAnotherTenantsPriority(t *testing.T) {
	const parent, rich, poor, claim = "reclaim-parent", "reclaim-rich", "reclaim-poor", "reclaim-claim"
	startScheduler(t, noProtection)
	for _, ns := range []string{rich, poor, claim} {
		createNamespace(t, ns)
		runFakeExtension(t, ns)
	}
	create(t, utiltesting.MakeElasticQuota(parent).Namespace(claim).Max("cpu", "6").Obj(),
		utiltesting.MakeElasticQuota(rich).Namespace(rich).Parent(parent).Max("cpu", "6").Obj(),
		utiltesting.MakeElasticQuota(poor).Namespace(poor).Parent(parent).Max("cpu", "6").Obj(),
		utiltesting.MakeElasticQuota(claim).Namespace(claim).Parent(parent).Min("cpu", "2").Max("cpu", "6").Obj())
	for _, name := range []string{"rich-0", "rich-1"} {
		create(t, utiltesting.MakeQueueUnit(name, rich).Quota(rich).Priority(math.MaxInt32).Request("cpu", "2").Obj())
		waitPhase(t, rich, name, schedv1alpha1.QueueUnitPhaseRunning)
	}
	create(t, utiltesting.MakeQueueUnit("poor-0", poor).Quota(poor).Priority(0).Request("cpu", "1").Obj())
	waitPhase(t, poor, "poor-0", schedv1alpha1.QueueUnitPhaseRunning)

	// 5 of 6 CPUs used; the claim needs 2, within its min: one unit goes.
	create(t, utiltesting.MakeQueueUnit("claim-0", claim).Quota(claim).Request("cpu", "2").Obj())
	waitPhase(t, claim, "claim-0", schedv1alpha1.QueueUnitPhaseRunning)
	// Evicted=True is written before the victim gives its quota back, so
	// before the claim is admitted.
	if u := getUnit(t, poor, "poor-0"); meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionEvicted) != nil ||
		u.Status.Phase != schedv1alpha1.QueueUnitPhaseRunning {
		dump(t, poor)
		t.Errorf("poor-0 (priority 0, its quota 1 CPU above its min) was evicted for the claim; the quota borrowing 4 CPUs should give")
	}
	evicted := 0
	for _, name := range []string{"rich-0", "rich-1"} {
		if meta.IsStatusConditionTrue(getUnit(t, rich, name).Status.Conditions, schedv1alpha1.ConditionEvicted) {
			evicted++
		}
	}
	if evicted != 1 {
		dump(t, rich)
		t.Errorf("%d units of quota %s evicted, want 1", evicted, rich)
	}
}

// A hand-made unit of a kind no extension manages (no job behind it) is
// admitted and borrows; reclaim picks it, and nothing hands it back. The
// claimer, and every unit of the cohort that would borrow, would wait for
// ever. At the eviction timeout (a deadline on the scheduler's clock) the
// scheduler hands the unit back itself, with a Warning event: the claimer is
// admitted, and only the clock moved.
func TestEvictedUnitNobodyHandsBackIsReleasedAtItsDeadline(t *testing.T) {
	const parent, hand, claim = "evict-parent", "evict-hand", "evict-claim"
	fc := clocktesting.NewFakeClock(time.Now())
	startScheduler(t, withClock(fc), noProtection)
	createNamespace(t, hand)
	createNamespace(t, claim)
	create(t, utiltesting.MakeElasticQuota(parent).Namespace(claim).Min("cpu", "2").Max("cpu", "4").Obj(),
		utiltesting.MakeElasticQuota(hand).Namespace(hand).Parent(parent).Max("cpu", "4").Obj(),
		utiltesting.MakeElasticQuota(claim).Namespace(claim).Parent(parent).Min("cpu", "2").Max("cpu", "4").Obj())
	widget := utiltesting.MakeQueueUnit("widget", hand).Quota(hand).ConsumerRef("example.com/v1", "Widget", "widget").
		Request("cpu", "4").Obj()
	create(t, widget)
	waitPhase(t, hand, "widget", schedv1alpha1.QueueUnitPhaseDequeued)

	create(t, utiltesting.MakeQueueUnit("claim-0", claim).Quota(claim).Request("cpu", "2").Obj())
	if err := framework.Eventually(ctx(), 20*time.Second, func(context.Context) (bool, error) {
		return meta.IsStatusConditionTrue(getUnit(t, hand, "widget").Status.Conditions, schedv1alpha1.ConditionEvicted), nil
	}); err != nil {
		dump(t, hand)
		t.Fatalf("widget was not chosen for the reclaim: %v", err)
	}
	if u := waitMessage(t, claim, "claim-0"); u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued {
		t.Fatalf("claim-0 is %s while widget still holds the parent", u.Status.Phase)
	}

	// Only the clock moves, past the default eviction timeout.
	fc.Step(configv1.DefaultEvictionTimeout + time.Second)
	waitPhase(t, claim, "claim-0", schedv1alpha1.QueueUnitPhaseDequeued)
	u := getUnit(t, hand, "widget")
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued || len(u.Status.Admissions) != 0 {
		t.Errorf("widget is %s with admissions %v, want Enqueued with none", u.Status.Phase, u.Status.Admissions)
	}
	if !hasEvent(t, hand, "widget", "EvictionTimeout", "evicted") {
		dump(t, hand)
		t.Error("no EvictionTimeout warning on widget")
	}
}
