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

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/app"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// Every waiting unit says what it waits for, in status.message and in its
// QuotaReserved=False condition. The expected texts below are written from
// each test's own setup: names, quotas and amounts.

// startReasons runs the scheduler on a fake clock for a reasons test.
func startReasons(t *testing.T, ns string, mutate ...func(*app.Options)) *clocktesting.FakeClock {
	t.Helper()
	fc := clocktesting.NewFakeClock(time.Now())
	startScheduler(t, append([]func(*app.Options){withClock(fc)}, mutate...)...)
	createNamespace(t, ns)
	return fc
}

// waitReason waits until unit ns/name waits with message want and returns
// it; its QuotaReserved condition must say the same, with reason.
func waitReason(t *testing.T, ns, name, reason, want string) *schedv1alpha1.QueueUnit {
	t.Helper()
	var u *schedv1alpha1.QueueUnit
	if err := framework.Eventually(ctx(), 20*time.Second, func(context.Context) (bool, error) {
		u = getUnit(t, ns, name)
		return u.Status.Message == want, nil
	}); err != nil {
		dump(t, ns)
		t.Fatalf("%s/%s says %q\nwant %q", ns, name, u.Status.Message, want)
	}
	checkWaitingCondition(t, u, reason)
	return u
}

func checkWaitingCondition(t *testing.T, u *schedv1alpha1.QueueUnit, reason string) {
	t.Helper()
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued {
		t.Errorf("%s: phase %s, want Enqueued", u.Name, u.Status.Phase)
	}
	c := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionQuotaReserved)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != reason || c.Message != u.Status.Message {
		t.Errorf("%s: QuotaReserved = %+v; want False, reason %s, message %q", u.Name, c, reason, u.Status.Message)
	}
}

// A unit whose quota's ancestor is full names the ancestor, the resource,
// its used, min and max, and what is missing.
func TestReasonNamesTheShortAncestor(t *testing.T) {
	const ns = "rs-quota"
	startReasons(t, ns)
	create(t, utiltesting.MakeElasticQuota("rs-org").Namespace(ns).Min("cpu", "2").Max("cpu", "4").Obj())
	create(t, utiltesting.MakeElasticQuota("rs-team").Namespace(ns).Parent("rs-org").Min("cpu", "1").Max("cpu", "10").Obj())
	create(t, utiltesting.MakeElasticQuota("rs-other").Namespace(ns).Parent("rs-org").Max("cpu", "10").Obj())
	waitQueue(t, "rs-team")
	waitQueue(t, "rs-other")
	create(t, utiltesting.MakeQueueUnit("other", ns).Quota("rs-other").Request("cpu", "3").Obj())
	waitPhase(t, ns, "other", schedv1alpha1.QueueUnitPhaseDequeued)
	create(t, utiltesting.MakeQueueUnit("team", ns).Quota("rs-team").Request("cpu", "2").Obj())
	// rs-org: 3 of 4 used, so 1 free; 2 asked: 1 missing.
	want := "insufficient quota: quota rs-org, an ancestor of quota rs-team, has 1 cpu free (used 3, min 2, max 4), the unit requests 2 cpu: 1 more cpu needed"
	waitReason(t, ns, "team", "InsufficientQuota", want)
	if err := framework.Eventually(ctx(), 10*time.Second, func(context.Context) (bool, error) {
		return hasEvent(t, ns, "team", "FailedScheduling", want), nil
	}); err != nil {
		t.Errorf("no FailedScheduling event with the reason")
	}
	// A new condition dates from the unit's creation: its wait began then.
	u := getUnit(t, ns, "team")
	if c := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionQuotaReserved); !c.LastTransitionTime.Equal(&u.CreationTimestamp) {
		t.Errorf("QuotaReserved changed at %v, want the creation %v", c.LastTransitionTime, u.CreationTimestamp)
	}
}

// In a Block queue each unit behind the blocked head names the unit directly
// ahead of it; once the head is admitted the others still say the same.
func TestReasonBlockQueueNamesTheUnitAhead(t *testing.T) {
	const ns, q = "rs-block", "rs-block"
	startReasons(t, ns)
	create(t, utiltesting.MakeElasticQuota(q).Namespace(ns).Max("cpu", "10").Policy(schedv1alpha1.QueuePolicyBlock).Obj())
	waitQueue(t, q)
	create(t, utiltesting.MakeQueueUnit("u0-filler", ns).Quota(q).Request("cpu", "6").Obj())
	waitPhase(t, ns, "u0-filler", schedv1alpha1.QueueUnitPhaseDequeued)
	create(t, utiltesting.MakeQueueUnit("u1-big", ns).Quota(q).Request("cpu", "8").Obj())
	waitReason(t, ns, "u1-big", "InsufficientQuota",
		"insufficient quota: quota rs-block has 4 cpu free (used 6, min 0, max 10), the unit requests 8 cpu: 4 more cpu needed")
	for _, name := range []string{"u2-small", "u3-small", "u4-small"} {
		create(t, utiltesting.MakeQueueUnit(name, ns).Quota(q).Request("cpu", "2").Obj())
	}
	behind := func(ahead string) string {
		return "waiting behind " + ns + "/" + ahead + ", the unit directly ahead of it in quota " + q + " of Block queue " + q + ", which admits the units of a quota in order"
	}
	waitReason(t, ns, "u2-small", "WaitingInLine", behind("u1-big"))
	waitReason(t, ns, "u3-small", "WaitingInLine", behind("u2-small"))
	u4 := waitReason(t, ns, "u4-small", "WaitingInLine", behind("u3-small"))
	if n := len(events(t, ns, "u2-small", "FailedScheduling")); n != 0 {
		t.Errorf("u2-small, never tried, has %d FailedScheduling events", n)
	}
	// The filler finishes: big (8) and u2 (2) fill the quota; u3 heads the
	// line and says so, u4 still names u3 and was not written again.
	setPhase(t, ns, "u0-filler", schedv1alpha1.QueueUnitPhaseSucceed)
	waitPhase(t, ns, "u1-big", schedv1alpha1.QueueUnitPhaseDequeued)
	waitPhase(t, ns, "u2-small", schedv1alpha1.QueueUnitPhaseDequeued)
	waitReason(t, ns, "u3-small", "InsufficientQuota",
		"insufficient quota: quota rs-block has 0 cpu free (used 10, min 0, max 10), the unit requests 2 cpu: 2 more cpu needed")
	if got := getUnit(t, ns, "u4-small"); got.ResourceVersion != u4.ResourceVersion {
		t.Errorf("u4-small was written again (%q) although the unit ahead of it did not change", got.Status.Message)
	}
}

// A low-band unit of an Intelligent queue names the high-band unit that
// holds it back.
func TestReasonIntelligentNamesTheHighBandUnit(t *testing.T) {
	const ns, q = "rs-intel", "rs-intel"
	startReasons(t, ns)
	create(t, utiltesting.MakeElasticQuota(q).Namespace(ns).Max("cpu", "10").Policy(schedv1alpha1.QueuePolicyIntelligent).Obj())
	waitQueue(t, q)
	create(t, utiltesting.MakeQueueUnit("u0-filler", ns).Quota(q).Priority(1).Request("cpu", "6").Obj())
	waitPhase(t, ns, "u0-filler", schedv1alpha1.QueueUnitPhaseDequeued)
	create(t, utiltesting.MakeQueueUnit("u1-high", ns).Quota(q).Priority(5).Request("cpu", "8").Obj())
	waitReason(t, ns, "u1-high", "InsufficientQuota",
		"insufficient quota: quota rs-intel has 4 cpu free (used 6, min 0, max 10), the unit requests 8 cpu: 4 more cpu needed")
	// It would fit, but the high band waits on the quota (threshold 4 by default).
	create(t, utiltesting.MakeQueueUnit("u2-low", ns).Quota(q).Priority(1).Request("cpu", "1").Obj())
	waitReason(t, ns, "u2-low", "HighBandWaiting",
		"held back: high-band unit "+ns+"/u1-high (priority 5, koord-queue/priority-threshold 4) of Intelligent queue "+q+
			" waits for quota "+q+"; low-band units may not take its room")
}

// A reclaim in progress: the preemptor says whom it evicts, a later unit of
// its quota names it, and a unit that would borrow meanwhile names it too.
func TestReasonPreemptionNamesThePreemptor(t *testing.T) {
	const ns = "rs-preempt"
	startReasons(t, ns, noProtection)
	create(t, utiltesting.MakeElasticQuota("rs-pr-parent").Namespace(ns).Max("cpu", "4").Obj())
	create(t, utiltesting.MakeElasticQuota("rs-pr-a").Namespace(ns).Parent("rs-pr-parent").Min("cpu", "2").Max("cpu", "4").Obj())
	create(t, utiltesting.MakeElasticQuota("rs-pr-b").Namespace(ns).Parent("rs-pr-parent").Min("cpu", "2").Max("cpu", "4").Obj())
	create(t, utiltesting.MakeElasticQuota("rs-pr-c").Namespace(ns).Parent("rs-pr-parent").Max("cpu", "4").Obj())
	for _, q := range []string{"rs-pr-a", "rs-pr-b", "rs-pr-c"} {
		waitQueue(t, q)
	}
	for _, name := range []string{"a-0", "a-1"} {
		create(t, utiltesting.MakeQueueUnit(name, ns).Quota("rs-pr-a").Request("cpu", "2").Obj())
		waitPhase(t, ns, name, schedv1alpha1.QueueUnitPhaseDequeued)
	}
	// No extension runs: the victim keeps its quota, so the reclaim stays in
	// progress while the test looks.
	create(t, utiltesting.MakeQueueUnit("b-0", ns).Quota("rs-pr-b").Request("cpu", "2").Obj())
	u := waitMessage(t, ns, "b-0")
	if !strings.HasPrefix(u.Status.Message, "preempting 1 unit(s) ("+ns+"/a-") || !strings.HasSuffix(u.Status.Message, "to make room in quota rs-pr-b; admitted once they give it back") {
		t.Errorf("b-0 says %q", u.Status.Message)
	}
	checkWaitingCondition(t, u, "Preempting")
	create(t, utiltesting.MakeQueueUnit("b-1", ns).Quota("rs-pr-b").Request("cpu", "1").Obj())
	waitReason(t, ns, "b-1", "RoomBeingMade",
		"held back: room is being made in quota rs-pr-b by preemption for "+ns+"/b-0 (priority 0); later units of the quota wait until it is admitted")
	create(t, utiltesting.MakeQueueUnit("c-0", ns).Quota("rs-pr-c").Request("cpu", "1").Obj())
	waitReason(t, ns, "c-0", "RoomBeingMade",
		"held back: room is being made by preemption for "+ns+"/b-0, and quota rs-pr-c would borrow above its min meanwhile; tried again once it is admitted")
}

// A quota under its min names the borrowers it will reclaim from and when
// their protection ends, and reclaims at that moment.
func TestReasonNamesProtectedBorrowers(t *testing.T) {
	const ns = "rs-protected"
	const protection = 5 * time.Minute
	fc := startReasons(t, ns, func(o *app.Options) { o.Config.ReclaimProtectionPeriod = &metav1.Duration{Duration: protection} })
	create(t, utiltesting.MakeElasticQuota("rs-pe-parent").Namespace(ns).Max("cpu", "4").Obj())
	for _, name := range []string{"rs-pe-a", "rs-pe-b"} {
		create(t, utiltesting.MakeElasticQuota(name).Namespace(ns).Parent("rs-pe-parent").Min("cpu", "2").Max("cpu", "4").Obj())
		waitQueue(t, name)
	}
	for _, name := range []string{"a-0", "a-1"} {
		create(t, utiltesting.MakeQueueUnit(name, ns).Quota("rs-pe-a").Request("cpu", "2").Obj())
		waitPhase(t, ns, name, schedv1alpha1.QueueUnitPhaseDequeued)
	}
	// Both were admitted at the fake clock's now.
	until := getUnit(t, ns, "a-1").Status.LastAllocateTime.Add(protection).UTC().Format(time.RFC3339)
	create(t, utiltesting.MakeQueueUnit("b-0", ns).Quota("rs-pe-b").Request("cpu", "2").Obj())
	u := waitMessage(t, ns, "b-0")
	short := "insufficient quota: quota rs-pe-parent, an ancestor of quota rs-pe-b, has 0 cpu free (used 4, min 0, max 4), the unit requests 2 cpu: 2 more cpu needed"
	tail := " (quota rs-pe-a), protected until " + until + " (reclaimProtectionPeriod)"
	head := short + "; room will be reclaimed from the quotas that borrow above their min: "
	if u.Status.Message != head+ns+"/a-0"+tail && u.Status.Message != head+ns+"/a-1"+tail {
		t.Errorf("b-0 says %q\nwant %q", u.Status.Message, head+ns+"/a-0 (or a-1)"+tail)
	}
	checkWaitingCondition(t, u, "WaitingForProtectionEnd")
	fc.Step(protection)
	if err := framework.Eventually(ctx(), 20*time.Second, func(context.Context) (bool, error) {
		return strings.HasPrefix(getUnit(t, ns, "b-0").Status.Message, "preempting 1 unit(s)"), nil
	}); err != nil {
		dump(t, ns)
		t.Fatalf("b-0 does not reclaim once the protection ended: %q", getUnit(t, ns, "b-0").Status.Message)
	}
}

// Inactive units, units whose execution budget is used up and units of a
// broken quota tree say so.
func TestReasonInactiveBudgetAndBrokenTree(t *testing.T) {
	const ns, q = "rs-misc", "rs-misc"
	startReasons(t, ns, func(o *app.Options) {
		o.Gates.QueueUnitActive = true
		o.Gates.MaximumExecutionTime = true
	})
	// The budgeted unit waits for its queue while the test spends its budget.
	spent := utiltesting.MakeQueueUnit("spent", ns).Quota(q).Request("cpu", "1").Obj()
	spent.Spec.MaximumExecutionTimeSeconds = ptr.To[int32](10)
	create(t, spent)
	waitMessage(t, ns, "spent")
	if err := framework.Eventually(ctx(), 10*time.Second, func(c context.Context) (bool, error) {
		u := &schedv1alpha1.QueueUnit{}
		if err := env.Client.Get(c, client.ObjectKey{Namespace: ns, Name: "spent"}, u); err != nil {
			return false, err
		}
		u.Status.AccumulatedPastExecutionTimeSeconds = ptr.To[int32](10)
		return true, env.Client.Status().Update(c, u)
	}); err != nil {
		t.Fatal(err)
	}
	create(t, utiltesting.MakeElasticQuota(q).Namespace(ns).Max("cpu", "4").Obj())
	waitQueue(t, q)
	waitReason(t, ns, "spent", "ExecutionBudgetUsedUp", "execution budget used up: raise spec.maximumExecutionTimeSeconds to run it again")

	create(t, utiltesting.MakeQueueUnit("paused", ns).Quota(q).Active(false).Request("cpu", "1").Obj())
	waitReason(t, ns, "paused", "Inactive", "inactive: spec.active is false; the unit is not admitted until it is set back to true")

	create(t, utiltesting.MakeElasticQuota("rs-orphan").Namespace(ns).Parent("rs-no-such-parent").Max("cpu", "4").Obj())
	waitQueue(t, "rs-orphan")
	create(t, utiltesting.MakeQueueUnit("orphaned", ns).Quota("rs-orphan").Request("cpu", "1").Obj())
	waitReason(t, ns, "orphaned", "InvalidQuotaTree",
		"invalid quota tree: the parent rs-no-such-parent of quota rs-orphan does not exist (label quota.scheduling.koordinator.sh/parent); the unit waits until the tree is fixed")
}

// A reserved unit names the admission checks it waits for, and only those
// still pending.
func TestReasonNamesPendingAdmissionChecks(t *testing.T) {
	const ns, q = "rs-checks", "rs-checks"
	startReasons(t, ns)
	for _, name := range []string{"rs-check-a", "rs-check-b"} {
		create(t, &schedv1alpha1.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: schedv1alpha1.AdmissionCheckSpec{ControllerName: "test.example/" + name}})
	}
	create(t, utiltesting.MakeElasticQuota(q).Namespace(ns).Max("cpu", "4").Obj())
	waitQueue(t, q)
	// A filler holds the quota while the scheduler learns the queue's checks.
	create(t, utiltesting.MakeQueueUnit("filler", ns).Quota(q).Request("cpu", "4").Obj())
	waitPhase(t, ns, "filler", schedv1alpha1.QueueUnitPhaseDequeued)
	update(t, &schedv1alpha1.Queue{}, schedv1alpha1.QueueNamespace, q, func(x *schedv1alpha1.Queue) {
		x.Spec.AdmissionChecks = []schedv1alpha1.AdmissionCheckWithSelector{{Name: "rs-check-a"}, {Name: "rs-check-b"}}
	})
	create(t, utiltesting.MakeQueueUnit("checked", ns).Quota(q).Request("cpu", "1").Obj())
	waitMessage(t, ns, "checked")
	setPhase(t, ns, "filler", schedv1alpha1.QueueUnitPhaseSucceed)
	u := waitPhase(t, ns, "checked", schedv1alpha1.QueueUnitPhaseReserved)
	if want := "waiting for admission checks rs-check-a, rs-check-b"; u.Status.Message != want {
		t.Errorf("checked says %q, want %q", u.Status.Message, want)
	}
	answer(t, ns, "checked", "rs-check-a", schedv1alpha1.CheckStateReady)
	if err := framework.Eventually(ctx(), 10*time.Second, func(context.Context) (bool, error) {
		return getUnit(t, ns, "checked").Status.Message == "waiting for admission checks rs-check-b", nil
	}); err != nil {
		t.Errorf("after rs-check-a is Ready, checked says %q", getUnit(t, ns, "checked").Status.Message)
	}
}

// In a mix of queues (Block with several units, Intelligent, a max-depth, a
// queue waiting for pods), no unit stays Enqueued for more than 2 s without
// saying why: each is polled from its creation.
func TestEveryWaitingUnitSaysWhyWithinTwoSeconds(t *testing.T) {
	const ns = "rs-mixed"
	startReasons(t, ns)
	quotas := []*utiltesting.ElasticQuotaWrapper{
		utiltesting.MakeElasticQuota("rs-mx-block").Namespace(ns).Max("cpu", "4").Policy(schedv1alpha1.QueuePolicyBlock),
		utiltesting.MakeElasticQuota("rs-mx-intel").Namespace(ns).Max("cpu", "4").Policy(schedv1alpha1.QueuePolicyIntelligent),
		utiltesting.MakeElasticQuota("rs-mx-depth").Namespace(ns).Max("cpu", "2").Annotation(schedv1alpha1.MaxDepthAnnotation, "2"),
		utiltesting.MakeElasticQuota("rs-mx-pods").Namespace(ns).Max("cpu", "10").Annotation(schedv1alpha1.WaitForPodsRunningAnnotation, "true"),
	}
	for _, q := range quotas {
		create(t, q.Obj())
		waitQueue(t, q.Obj().Name)
	}
	type spec struct {
		name, quota string
		prio        int32
		cpu         string
	}
	// Admitted first, so the others wait behind them.
	for _, s := range []spec{{"b0", "rs-mx-block", 0, "2"}, {"i0", "rs-mx-intel", 1, "3"}, {"p0", "rs-mx-pods", 0, "1"}} {
		create(t, utiltesting.MakeQueueUnit(s.name, ns).Quota(s.quota).Priority(s.prio).Request("cpu", s.cpu).Obj())
		waitPhase(t, ns, s.name, schedv1alpha1.QueueUnitPhaseDequeued)
	}
	burst := []spec{
		{"b1", "rs-mx-block", 0, "4"}, {"b2", "rs-mx-block", 0, "1"}, {"b3", "rs-mx-block", 0, "1"}, {"b4", "rs-mx-block", 0, "1"},
		{"i1", "rs-mx-intel", 5, "4"}, {"i2", "rs-mx-intel", 1, "1"}, {"i3", "rs-mx-intel", 5, "1"},
		{"d0", "rs-mx-depth", 0, "1"}, {"d1", "rs-mx-depth", 0, "1"}, {"d2", "rs-mx-depth", 0, "1"},
		{"d3", "rs-mx-depth", 0, "1"}, {"d4", "rs-mx-depth", 0, "1"}, {"d5", "rs-mx-depth", 0, "1"},
		{"p1", "rs-mx-pods", 0, "1"}, {"p2", "rs-mx-pods", 0, "1"},
	}
	created := map[string]time.Time{}
	for _, s := range burst {
		create(t, utiltesting.MakeQueueUnit(s.name, ns).Quota(s.quota).Priority(s.prio).Request("cpu", s.cpu).Obj())
		created[s.name] = time.Now()
	}
	// told: when each unit was first seen admitted or waiting with a reason.
	told := map[string]time.Time{}
	waiting := map[string]*schedv1alpha1.QueueUnit{}
	_ = framework.Eventually(ctx(), 10*time.Second, func(c context.Context) (bool, error) {
		list := &schedv1alpha1.QueueUnitList{}
		if err := env.Client.List(c, list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		now := time.Now()
		for i := range list.Items {
			u := &list.Items[i]
			if _, ok := created[u.Name]; !ok {
				continue
			}
			if _, ok := told[u.Name]; ok {
				continue
			}
			switch {
			case u.Status.Phase == schedv1alpha1.QueueUnitPhaseDequeued:
				told[u.Name] = now
			case u.Status.Message != "":
				told[u.Name] = now
				waiting[u.Name] = u
			}
		}
		return len(told) == len(burst), nil
	})
	for _, s := range burst {
		at, ok := told[s.name]
		if !ok {
			t.Errorf("%s never said why it waits", s.name)
			continue
		}
		if d := at.Sub(created[s.name]); d > 2*time.Second {
			t.Errorf("%s said why it waits only %v after its creation", s.name, d.Round(10*time.Millisecond))
		}
	}
	// The samples are what the setup makes: these units wait, for these reasons.
	wantWaiting := map[string]string{
		"b1": "InsufficientQuota", "b2": "WaitingInLine", "b3": "WaitingInLine", "b4": "WaitingInLine",
		"i1": "InsufficientQuota", "i2": "HighBandWaiting", "i3": "WaitingInLine",
		"p1": "WaitingForPodsRunning", "p2": "WaitingForPodsRunning",
	}
	for name, reason := range wantWaiting {
		u := waiting[name]
		if u == nil {
			t.Errorf("%s was not seen waiting", name)
			continue
		}
		checkWaitingCondition(t, u, reason)
	}
	// At most 2 of the depth queue's units fit; the others wait, and those
	// the passes did not reach say so.
	depthWaiting, beyond := 0, 0
	for _, name := range []string{"d0", "d1", "d2", "d3", "d4", "d5"} {
		if u := waiting[name]; u != nil {
			depthWaiting++
			if meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionQuotaReserved).Reason == "BeyondMaxDepth" {
				beyond++
			}
		}
	}
	if depthWaiting != 4 || beyond == 0 {
		t.Errorf("depth queue: %d units waiting (want 4), %d of them beyond max-depth (want some)", depthWaiting, beyond)
	}
}

// A preemptor held back behind a unit that arrived ahead of it gives up its
// nomination: otherwise that unit, paused because it would borrow while room
// is made for the preemptor, and the preemptor, held back behind it, would
// wait for each other forever (both say so in their messages).
func TestHeldBackPreemptorDoesNotPauseItsCohort(t *testing.T) {
	const ns, q = "rs-deadlock", "rs-dl-a"
	startReasons(t, ns, noProtection)
	create(t, utiltesting.MakeElasticQuota("rs-dl-parent").Namespace(ns).Max("cpu", "8").Obj())
	create(t, utiltesting.MakeElasticQuota(q).Namespace(ns).Parent("rs-dl-parent").Min("cpu", "2").Max("cpu", "8").
		Policy(schedv1alpha1.QueuePolicyBlock).Annotation(schedv1alpha1.PreemptionPolicyAnnotation, "LowerPriority").Obj())
	waitQueue(t, q)
	for _, name := range []string{"low-1", "low-2"} {
		create(t, utiltesting.MakeQueueUnit(name, ns).Quota(q).Priority(1).Request("cpu", "4").Obj())
		waitPhase(t, ns, name, schedv1alpha1.QueueUnitPhaseDequeued)
	}
	// mid preempts one low unit; no extension runs yet, so the victim keeps
	// its quota and mid stays nominated.
	create(t, utiltesting.MakeQueueUnit("mid", ns).Quota(q).Priority(100).Request("cpu", "4").Obj())
	if err := framework.Eventually(ctx(), 20*time.Second, func(context.Context) (bool, error) {
		return strings.HasPrefix(getUnit(t, ns, "mid").Status.Message, "preempting 1 unit(s)"), nil
	}); err != nil {
		dump(t, ns)
		t.Fatalf("mid does not preempt: %q", getUnit(t, ns, "mid").Status.Message)
	}
	// high comes ahead of mid and would borrow above the quota's min.
	create(t, utiltesting.MakeQueueUnit("high", ns).Quota(q).Priority(200).Request("cpu", "4").Obj())
	waitMessage(t, ns, "high")
	// The extension now suspends the victim: high, then mid, are admitted.
	runFakeExtension(t, ns)
	waitPhase(t, ns, "high", schedv1alpha1.QueueUnitPhaseRunning)
	waitPhase(t, ns, "mid", schedv1alpha1.QueueUnitPhaseRunning)
}
