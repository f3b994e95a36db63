package scheduler

import (
	"testing"

	"github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// A unit held back behind the blocked head of a Block queue says what it
// waits for, although it was never tried.
func TestHeldBackUnitSaysWhy(t *testing.T) {
	const ns, q = "held-back", "held-back"
	startScheduler(t)
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota(q).Namespace(ns).Max("cpu", "10").Policy(v1alpha1.QueuePolicyBlock).Obj())
	waitQueue(t, q)
	create(t, utiltesting.MakeQueueUnit("filler", ns).Quota(q).Request("cpu", "6").Obj())
	waitPhase(t, ns, "filler", v1alpha1.QueueUnitPhaseDequeued)
	create(t, utiltesting.MakeQueueUnit("big", ns).Quota(q).Request("cpu", "8").Obj())
	waitMessage(t, ns, "big")
	create(t, utiltesting.MakeQueueUnit("small", ns).Quota(q).Request("cpu", "2").Obj())
	u := waitMessage(t, ns, "small")
	want := "held back: " + ns + "/big waits for quota " + q + " first (Block policy)"
	if u.Status.Phase != v1alpha1.QueueUnitPhaseEnqueued || u.Status.Message != want {
		t.Fatalf("small: phase %s, message %q; want Enqueued with %q", u.Status.Phase, u.Status.Message, want)
	}
	setPhase(t, ns, "filler", v1alpha1.QueueUnitPhaseSucceed)
	waitPhase(t, ns, "big", v1alpha1.QueueUnitPhaseDequeued)
	waitPhase(t, ns, "small", v1alpha1.QueueUnitPhaseDequeued)
}
