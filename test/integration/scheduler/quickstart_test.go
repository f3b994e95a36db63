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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// The guide's quick start at QueueUnit level: two 4-CPU/8Gi units on a
// 4-CPU/8Gi quota. The first is dequeued, the second waits and says why, and
// is dequeued once the first finishes.
func TestQuickStart(t *testing.T) {
	startScheduler(t)
	createNamespace(t, "quickstart")
	create(t, utiltesting.MakeElasticQuota("team-a").Namespace("quickstart").Max("cpu", "4").Max("memory", "8Gi").
		Min("cpu", "4").Min("memory", "8Gi").Parent("").IsParent(false).Obj())
	create(t, utiltesting.MakeQueueUnit("my-job", "quickstart").Quota("team-a").Request("cpu", "4").Request("memory", "8Gi").Obj())
	first := waitPhase(t, "quickstart", "my-job", schedv1alpha1.QueueUnitPhaseDequeued)
	create(t, utiltesting.MakeQueueUnit("my-job-blocked", "quickstart").Quota("team-a").Request("cpu", "4").Request("memory", "8Gi").Obj())

	if len(first.Status.Admissions) != 1 || first.Status.Admissions[0].Replicas != 1 || first.Status.LastAllocateTime == nil {
		t.Errorf("admitted unit status: %+v", first.Status)
	}
	for _, c := range []string{schedv1alpha1.ConditionQuotaReserved, schedv1alpha1.ConditionAdmitted} {
		if !hasCondition(first, c) {
			t.Errorf("condition %s not True: %+v", c, first.Status.Conditions)
		}
	}
	var blocked *schedv1alpha1.QueueUnit
	if err := framework.Eventually(ctx(), 20*time.Second, func(c context.Context) (bool, error) {
		blocked = getUnit(t, "quickstart", "my-job-blocked")
		return blocked.Status.Phase == schedv1alpha1.QueueUnitPhaseEnqueued && blocked.Status.Message != "", nil
	}); err != nil {
		t.Fatalf("blocked unit: phase %q message %q: %v", blocked.Status.Phase, blocked.Status.Message, err)
	}
	for _, want := range []string{"team-a", "cpu"} {
		if !strings.Contains(blocked.Status.Message, want) {
			t.Errorf("message %q does not name %q", blocked.Status.Message, want)
		}
	}
	if err := framework.Eventually(ctx(), 10*time.Second, func(context.Context) (bool, error) {
		return len(events(t, "quickstart", "my-job-blocked", "FailedScheduling")) == 1 && len(events(t, "quickstart", "my-job", "Scheduled")) == 1, nil
	}); err != nil {
		t.Errorf("events: FailedScheduling %d, Scheduled %d: %v", len(events(t, "quickstart", "my-job-blocked", "FailedScheduling")),
			len(events(t, "quickstart", "my-job", "Scheduled")), err)
	}
	// The admission's answer was the unit's metadata alone: the Scheduled
	// event names the version of the unit the admission wrote.
	if ev := events(t, "quickstart", "my-job", "Scheduled"); len(ev) == 1 && ev[0].InvolvedObject.ResourceVersion != first.ResourceVersion {
		t.Errorf("Scheduled event names my-job at resourceVersion %q, the admission wrote %q", ev[0].InvolvedObject.ResourceVersion, first.ResourceVersion)
	}

	setPhase(t, "quickstart", "my-job", schedv1alpha1.QueueUnitPhaseRunning)
	time.Sleep(300 * time.Millisecond)
	if got := getUnit(t, "quickstart", "my-job-blocked").Status.Phase; got != schedv1alpha1.QueueUnitPhaseEnqueued {
		t.Fatalf("second unit %s while the first runs", got)
	}
	setPhase(t, "quickstart", "my-job", schedv1alpha1.QueueUnitPhaseSucceed)
	waitPhase(t, "quickstart", "my-job-blocked", schedv1alpha1.QueueUnitPhaseDequeued)
	// The reason did not change while it waited: one event, not one per pass.
	if n := len(events(t, "quickstart", "my-job-blocked", "FailedScheduling")); n != 1 {
		t.Errorf("FailedScheduling events = %d, want 1", n)
	}
}

func hasCondition(u *schedv1alpha1.QueueUnit, t string) bool {
	for _, c := range u.Status.Conditions {
		if c.Type == t && c.Status == "True" {
			return true
		}
	}
	return false
}

// Every ElasticQuota gets a Queue in koord-queue that follows its labels and
// annotations and goes away with it.
func TestQueueFollowsElasticQuota(t *testing.T) {
	startScheduler(t)
	createNamespace(t, "autoqueue")
	eq := utiltesting.MakeElasticQuota("auto-q").Namespace("autoqueue").Max("cpu", "10").
		Policy(schedv1alpha1.QueuePolicyIntelligent).Annotation(schedv1alpha1.PriorityThresholdAnnotation, "5").Obj()
	create(t, eq)
	q := &schedv1alpha1.Queue{}
	waitQueue := func(cond func(*schedv1alpha1.Queue) bool) {
		t.Helper()
		if err := framework.Eventually(ctx(), 20*time.Second, func(c context.Context) (bool, error) {
			if err := env.Client.Get(c, client.ObjectKey{Namespace: "koord-queue", Name: "auto-q"}, q); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return cond(q), nil
		}); err != nil {
			t.Fatalf("queue %+v: %v", q, err)
		}
	}
	waitQueue(func(q *schedv1alpha1.Queue) bool {
		return q.Spec.QueuePolicy == schedv1alpha1.QueuePolicyIntelligent && ptr.Deref(q.Spec.Priority, 0) == 1000 &&
			q.Annotations[schedv1alpha1.PriorityThresholdAnnotation] == "5"
	})
	// Changing the label changes the policy at run time.
	eq.Labels[schedv1alpha1.QueuePolicyLabel] = string(schedv1alpha1.QueuePolicyBlock)
	if err := env.Client.Update(ctx(), eq); err != nil {
		t.Fatal(err)
	}
	waitQueue(func(q *schedv1alpha1.Queue) bool { return q.Spec.QueuePolicy == schedv1alpha1.QueuePolicyBlock })

	// A koord-queue/* key written on the Queue by hand survives the next sync;
	// the quota's own keys still win.
	mergePatch(t, &schedv1alpha1.Queue{}, "koord-queue", "auto-q",
		`{"metadata":{"annotations":{"koord-queue/wait-for-pods-running":"true"}}}`)
	mergePatch(t, eq, eq.Namespace, eq.Name,
		`{"metadata":{"annotations":{"koord-queue/priority-threshold":"6","koord-queue/max-depth":"7"}}}`)
	waitQueue(func(q *schedv1alpha1.Queue) bool {
		return q.Annotations[schedv1alpha1.PriorityThresholdAnnotation] == "6" && q.Annotations["koord-queue/max-depth"] == "7" &&
			q.Annotations["koord-queue/wait-for-pods-running"] == "true"
	})
	// A key the quota drops goes from the Queue; removing the policy label
	// returns the Queue to Priority.
	mergePatch(t, eq, eq.Namespace, eq.Name,
		`{"metadata":{"annotations":{"koord-queue/max-depth":null},"labels":{"koord-queue/queue-policy":null}}}`)
	waitQueue(func(q *schedv1alpha1.Queue) bool {
		_, depth := q.Annotations["koord-queue/max-depth"]
		return !depth && q.Spec.QueuePolicy == schedv1alpha1.QueuePolicyPriority &&
			q.Annotations[schedv1alpha1.PriorityThresholdAnnotation] == "6" && q.Annotations["koord-queue/wait-for-pods-running"] == "true"
	})
	if err := env.Client.Delete(ctx(), eq); err != nil {
		t.Fatal(err)
	}
	if err := framework.Eventually(ctx(), 20*time.Second, func(c context.Context) (bool, error) {
		err := env.Client.Get(c, client.ObjectKey{Namespace: "koord-queue", Name: "auto-q"}, &schedv1alpha1.Queue{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Fatal("queue not deleted with its quota")
	}
}

// A unit whose queue does not exist says so once, and is admitted as soon as
// the quota (and so the queue) appears.
func TestQueueNotFound(t *testing.T) {
	startScheduler(t)
	createNamespace(t, "noqueue")
	create(t, utiltesting.MakeQueueUnit("orphan", "noqueue").Quota("late-quota").Request("cpu", "1").Obj())
	if err := framework.Eventually(ctx(), 20*time.Second, func(context.Context) (bool, error) {
		u := getUnit(t, "noqueue", "orphan")
		return u.Status.Phase == schedv1alpha1.QueueUnitPhaseEnqueued && strings.Contains(u.Status.Message, "late-quota not found") &&
			len(events(t, "noqueue", "orphan", "QueueNotFound")) == 1, nil
	}); err != nil {
		t.Fatalf("no QueueNotFound report: %+v: %v", getUnit(t, "noqueue", "orphan").Status, err)
	}
	// Touching the unit does not repeat the event.
	u := getUnit(t, "noqueue", "orphan")
	u.Labels["touch"] = "1"
	if err := env.Client.Update(ctx(), u); err != nil {
		t.Fatal(err)
	}
	create(t, utiltesting.MakeElasticQuota("late-quota").Namespace("noqueue").Max("cpu", "2").Obj())
	waitPhase(t, "noqueue", "orphan", schedv1alpha1.QueueUnitPhaseDequeued)
	if n := len(events(t, "noqueue", "orphan", "QueueNotFound")); n != 1 {
		t.Errorf("QueueNotFound events = %d, want 1", n)
	}
}

// A unit that can never fit says so.
func TestNeverFits(t *testing.T) {
	startScheduler(t)
	createNamespace(t, "neverfits")
	create(t, utiltesting.MakeElasticQuota("small").Namespace("neverfits").Max("cpu", "2").Obj())
	create(t, utiltesting.MakeQueueUnit("huge", "neverfits").Quota("small").Request("cpu", "3").Obj())
	if err := framework.Eventually(ctx(), 20*time.Second, func(context.Context) (bool, error) {
		return strings.Contains(getUnit(t, "neverfits", "huge").Status.Message, "can never fit"), nil
	}); err != nil {
		t.Fatalf("message %q", getUnit(t, "neverfits", "huge").Status.Message)
	}
}

// Units refused in a pass let later units that ask as much be answered
// without a filter; a smaller unit behind them is still admitted, and each
// refused unit reports its own numbers.
func TestRefusalsDoNotHideSmallerUnits(t *testing.T) {
	createNamespace(t, "shapes")
	create(t, utiltesting.MakeElasticQuota("shapes").Namespace("shapes").Max("cpu", "4").Obj())
	// Everything is queued before the scheduler starts, so its first pass sees it all.
	create(t,
		utiltesting.MakeQueueUnit("first", "shapes").Quota("shapes").Priority(100).Request("cpu", "3").Obj(),
		utiltesting.MakeQueueUnit("big-a", "shapes").Quota("shapes").Priority(10).Request("cpu", "2").Obj(),
		utiltesting.MakeQueueUnit("big-b", "shapes").Quota("shapes").Priority(5).Request("cpu", "3").Obj(),
		utiltesting.MakeQueueUnit("small", "shapes").Quota("shapes").Priority(1).Request("cpu", "1").Obj(),
	)
	startScheduler(t)
	waitPhase(t, "shapes", "first", schedv1alpha1.QueueUnitPhaseDequeued)
	waitPhase(t, "shapes", "small", schedv1alpha1.QueueUnitPhaseDequeued)
	for name, want := range map[string]string{"big-a": "the unit requests 2 cpu", "big-b": "the unit requests 3 cpu"} {
		if err := framework.Eventually(ctx(), 20*time.Second, func(context.Context) (bool, error) {
			return strings.Contains(getUnit(t, "shapes", name).Status.Message, want), nil
		}); err != nil {
			dump(t, "shapes")
			t.Fatalf("%s: message %q, want it to contain %q", name, getUnit(t, "shapes", name).Status.Message, want)
		}
	}
	for _, name := range []string{"big-a", "big-b"} {
		if p := getUnit(t, "shapes", name).Status.Phase; p != schedv1alpha1.QueueUnitPhaseEnqueued {
			t.Errorf("%s phase %q, want Enqueued", name, p)
		}
	}
}

// mergePatch applies a JSON merge patch to the object namespace/name of obj's kind.
func mergePatch(t *testing.T, obj client.Object, namespace, name, patch string) {
	t.Helper()
	obj.SetNamespace(namespace)
	obj.SetName(name)
	obj.SetResourceVersion("")
	if err := env.Client.Patch(ctx(), obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("patch %s/%s: %v", namespace, name, err)
	}
}
