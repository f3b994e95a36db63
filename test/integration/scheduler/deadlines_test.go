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

// Deadlines are events: each test below moves only a fake clock, and the
// transition due at the deadline happens with nothing else changing.

func withClock(c *clocktesting.FakeClock) func(*app.Options) {
	return func(o *app.Options) { o.Clock = c }
}

// waitMessage waits until a unit says why it waits: the pass that refused it
// is over (reports are written after the pass).
func waitMessage(t *testing.T, ns, name string) *schedv1alpha1.QueueUnit {
	t.Helper()
	var u *schedv1alpha1.QueueUnit
	if err := framework.Eventually(ctx(), 20*time.Second, func(context.Context) (bool, error) {
		u = getUnit(t, ns, name)
		return u.Status.Message != "", nil
	}); err != nil {
		dump(t, ns)
		t.Fatalf("unit %s/%s never said why it waits", ns, name)
	}
	return u
}

// stepUntil moves the fake clock on by step until cond holds, at most n
// times, and returns how many steps it took. Nothing else moves time, so cond
// can only come true through a deadline the scheduler set itself.
func stepUntil(t *testing.T, c *clocktesting.FakeClock, step time.Duration, n int, cond func() bool) int {
	t.Helper()
	for i := 0; i <= n; i++ {
		ok := false
		_ = framework.Eventually(ctx(), 300*time.Millisecond, func(context.Context) (bool, error) { ok = cond(); return ok, nil })
		if ok {
			return i
		}
		c.Step(step)
	}
	t.Fatalf("condition not met after %d steps of %s", n, step)
	return 0
}

// The end of the reclaim protection period is a deadline of its own: a
// quota under its min reclaims from a borrower the moment the borrower's
// protection ends, with nothing else happening in the cluster.
func TestReclaimStartsWhenProtectionEnds(t *testing.T) {
	const ns = "protection-end"
	const protection = 5 * time.Minute
	fc := clocktesting.NewFakeClock(time.Now())
	startScheduler(t, withClock(fc), func(o *app.Options) { o.Config.ReclaimProtectionPeriod = &metav1.Duration{Duration: protection} })
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota("pe-parent").Namespace(ns).Max("cpu", "4").Obj())
	for _, name := range []string{"pe-a", "pe-b"} {
		create(t, utiltesting.MakeElasticQuota(name).Namespace(ns).Parent("pe-parent").Min("cpu", "2").Max("cpu", "4").Obj())
	}
	runFakeExtension(t, ns)

	// pe-a borrows the whole parent.
	for _, name := range []string{"a-0", "a-1"} {
		create(t, utiltesting.MakeQueueUnit(name, ns).Quota("pe-a").Request("cpu", "2").Obj())
		waitPhase(t, ns, name, schedv1alpha1.QueueUnitPhaseRunning)
	}
	admittedAt := getUnit(t, ns, "a-1").Status.LastAllocateTime.Time
	// pe-b asks for its min: the borrower is protected, so it waits, and says until when.
	create(t, utiltesting.MakeQueueUnit("b-0", ns).Quota("pe-b").Request("cpu", "2").Obj())
	if m := waitMessage(t, ns, "b-0").Status.Message; !strings.Contains(m, "protected until "+admittedAt.Add(protection).UTC().Format(time.RFC3339)) {
		t.Errorf("b-0 does not say until when the borrowers are protected: %q", m)
	}
	if p := getUnit(t, ns, "b-0").Status.Phase; p != schedv1alpha1.QueueUnitPhaseEnqueued {
		t.Fatalf("b-0 is %s during the protection period", p)
	}
	for _, name := range []string{"a-0", "a-1"} {
		if n := len(events(t, ns, name, "Preempted")); n != 0 {
			t.Fatalf("%s evicted during its protection period", name)
		}
	}
	// The protection ends; only the clock moves.
	fc.Step(protection)
	u := waitPhase(t, ns, "b-0", schedv1alpha1.QueueUnitPhaseRunning)
	evicted := 0
	for _, name := range []string{"a-0", "a-1"} {
		a := getUnit(t, ns, name)
		c := meta.FindStatusCondition(a.Status.Conditions, schedv1alpha1.ConditionEvicted)
		if c == nil || c.Reason != schedv1alpha1.ReasonPreempted {
			continue
		}
		evicted++
		if c.LastTransitionTime.Time.Before(admittedAt.Add(protection)) {
			t.Errorf("%s evicted at %v, before its protection ended at %v", name, c.LastTransitionTime, admittedAt.Add(protection))
		}
	}
	if evicted != 1 {
		t.Errorf("%d borrower units evicted, want exactly 1", evicted)
	}
	if u.Status.LastAllocateTime.Sub(admittedAt) > protection+time.Second {
		t.Errorf("b-0 admitted at %v, more than 1s after the protection ended at %v", u.Status.LastAllocateTime, admittedAt.Add(protection))
	}
}

// An admission check timeout fires on its own, also for a check that names
// no AdmissionCheck; the end of the backoff (requeueAt) then puts the unit
// back in its queue, again with only the clock moving.
func TestAdmissionCheckDeadlinesOnFakeClock(t *testing.T) {
	const ns, q = "ac-deadline", "ac-deadline"
	const timeout = 30 * time.Second
	fc := clocktesting.NewFakeClock(time.Now())
	startScheduler(t, withClock(fc), func(o *app.Options) { o.Config.AdmissionCheckTimeout = &metav1.Duration{Duration: timeout} })
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota(q).Namespace(ns).Max("cpu", "4").Obj())
	if err := framework.Eventually(ctx(), 20*time.Second, func(c context.Context) (bool, error) {
		queue := &schedv1alpha1.Queue{}
		if err := env.Client.Get(c, client.ObjectKey{Namespace: schedv1alpha1.QueueNamespace, Name: q}, queue); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		queue.Spec.AdmissionChecks = []schedv1alpha1.AdmissionCheckWithSelector{{Name: "no-such-check"}}
		return true, env.Client.Update(c, queue)
	}); err != nil {
		t.Fatal(err)
	}
	create(t, utiltesting.MakeQueueUnit("held", ns).Quota(q).Request("cpu", "1").Obj())
	u := waitPhase(t, ns, "held", schedv1alpha1.QueueUnitPhaseReserved)
	reservedAt := u.Status.LastAllocateTime.Time

	stepUntil(t, fc, time.Second, 2*int(timeout/time.Second), func() bool {
		return getUnit(t, ns, "held").Status.Phase == schedv1alpha1.QueueUnitPhaseTimeoutBackoff
	})
	u = getUnit(t, ns, "held")
	c := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionQuotaReserved)
	if c == nil || c.Reason != "AdmissionCheckTimeout" {
		t.Fatalf("QuotaReserved = %+v, want reason AdmissionCheckTimeout", c)
	}
	if c.LastTransitionTime.Time.Before(reservedAt.Add(timeout)) {
		t.Errorf("timed out at %v, before the timeout ended at %v", c.LastTransitionTime, reservedAt.Add(timeout))
	}
	if u.Status.RequeueState == nil || u.Status.RequeueState.RequeueAt == nil {
		t.Fatalf("no requeueAt on a backed-off unit: %+v", u.Status)
	}
	requeueAt := u.Status.RequeueState.RequeueAt.Time
	// The backoff's end is a deadline too: the unit is queued and reserved again.
	stepUntil(t, fc, time.Second, 60, func() bool {
		x := getUnit(t, ns, "held")
		return x.Status.Phase == schedv1alpha1.QueueUnitPhaseReserved && x.Status.LastAllocateTime != nil && x.Status.LastAllocateTime.After(reservedAt)
	})
	if again := getUnit(t, ns, "held").Status.LastAllocateTime.Time; again.Before(requeueAt.Truncate(time.Second)) {
		t.Errorf("reserved again at %v, before requeueAt %v", again, requeueAt)
	}
}

// The execution budget ends on its own at its deadline.
func TestExecutionBudgetOnFakeClock(t *testing.T) {
	const ns, q = "budget-clock", "budget-clock"
	fc := clocktesting.NewFakeClock(time.Now())
	startScheduler(t, withClock(fc), func(o *app.Options) { o.Gates.MaximumExecutionTime = true })
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota(q).Namespace(ns).Max("cpu", "4").Obj())
	unit := utiltesting.MakeQueueUnit("budgeted", ns).Quota(q).Request("cpu", "1").Obj()
	unit.Spec.MaximumExecutionTimeSeconds = ptr.To[int32](60)
	create(t, unit)
	waitPhase(t, ns, "budgeted", schedv1alpha1.QueueUnitPhaseDequeued)
	// Play the extension: the pods run from the fake clock's now.
	startedAt := fc.Now()
	if err := framework.Eventually(ctx(), 10*time.Second, func(c context.Context) (bool, error) {
		u := &schedv1alpha1.QueueUnit{}
		if err := env.Client.Get(c, client.ObjectKey{Namespace: ns, Name: "budgeted"}, u); err != nil {
			return false, err
		}
		u.Status.Phase = schedv1alpha1.QueueUnitPhaseRunning
		meta.SetStatusCondition(&u.Status.Conditions, metav1.Condition{Type: schedv1alpha1.ConditionPodsReady, Status: metav1.ConditionTrue,
			Reason: "PodsRunning", Message: "test", LastTransitionTime: metav1.NewTime(startedAt)})
		return true, env.Client.Status().Update(c, u)
	}); err != nil {
		t.Fatal(err)
	}
	stepUntil(t, fc, time.Second, 120, func() bool {
		return meta.IsStatusConditionTrue(getUnit(t, ns, "budgeted").Status.Conditions, schedv1alpha1.ConditionEvicted)
	})
	c := meta.FindStatusCondition(getUnit(t, ns, "budgeted").Status.Conditions, schedv1alpha1.ConditionEvicted)
	if c.Reason != schedv1alpha1.ReasonMaximumExecutionTimeExceeded {
		t.Errorf("Evicted reason %s, want %s", c.Reason, schedv1alpha1.ReasonMaximumExecutionTimeExceeded)
	}
	if c.LastTransitionTime.Time.Before(startedAt.Add(60 * time.Second).Truncate(time.Second)) {
		t.Errorf("evicted at %v, before the budget ended at %v", c.LastTransitionTime, startedAt.Add(60*time.Second))
	}
}

// wait-for-pods-running is rebuilt from the API: after a restart the queue
// still waits for the pods of the unit it admitted last.
func TestWaitForPodsRunningSurvivesRestart(t *testing.T) {
	const ns, q = "wfpr-restart", "wfpr-restart"
	stop := startScheduler(t)
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota(q).Namespace(ns).Max("cpu", "10").
		Annotation(schedv1alpha1.WaitForPodsRunningAnnotation, "true").Obj())
	create(t, utiltesting.MakeQueueUnit("first", ns).Quota(q).Request("cpu", "1").Obj())
	waitPhase(t, ns, "first", schedv1alpha1.QueueUnitPhaseDequeued)
	stop()

	startScheduler(t)
	create(t, utiltesting.MakeQueueUnit("second", ns).Quota(q).Request("cpu", "1").Obj())
	// The new scheduler keeps it waiting, and it says for what.
	u := waitMessage(t, ns, "second")
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued || !strings.Contains(u.Status.Message, "waiting in queue "+q+": it admits its next unit once the pods of the unit it admitted last are running") {
		t.Fatalf("second: phase %s, message %q", u.Status.Phase, u.Status.Message)
	}
	setPhase(t, ns, "first", schedv1alpha1.QueueUnitPhaseRunning)
	waitPhase(t, ns, "second", schedv1alpha1.QueueUnitPhaseDequeued)
}
