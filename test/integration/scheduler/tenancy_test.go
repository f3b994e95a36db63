package scheduler

import (
	"context"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

func relabel(t *testing.T, ns, name, quotaName string) {
	t.Helper()
	if err := framework.Eventually(ctx(), 10*time.Second, func(c context.Context) (bool, error) {
		u := &v1alpha1.QueueUnit{}
		if err := env.Client.Get(c, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
			return false, err
		}
		u.Labels[v1alpha1.QuotaNameLabel] = quotaName
		return true, env.Client.Update(c, u)
	}); err != nil {
		t.Fatal(err)
	}
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
	u := waitPhase(t, ns, "first", v1alpha1.QueueUnitPhaseDequeued)
	if u.Status.Quota != "rl-a" {
		t.Errorf("admission records quota %q, want rl-a", u.Status.Quota)
	}
	setPhase(t, ns, "first", v1alpha1.QueueUnitPhaseRunning)
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
	if p := getUnit(t, ns, "second").Status.Phase; p != v1alpha1.QueueUnitPhaseEnqueued {
		t.Fatalf("second is %s: the relabelled unit's quota was given away", p)
	}
	// A restarted scheduler reads the charge from the admission, not the label.
	stop()
	startScheduler(t)
	create(t, utiltesting.MakeQueueUnit("third", ns).Quota("rl-a").Request("cpu", "2").Obj())
	waitPhase(t, ns, "third", v1alpha1.QueueUnitPhaseEnqueued)
	if p := getUnit(t, ns, "second").Status.Phase; p != v1alpha1.QueueUnitPhaseEnqueued {
		t.Fatalf("after a restart second is %s", p)
	}
	setPhase(t, ns, "first", v1alpha1.QueueUnitPhaseSucceed)
	waitPhase(t, ns, "second", v1alpha1.QueueUnitPhaseDequeued)
}
