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

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	jobextapp "github.com/koordinator-sh/koord-queue/pkg/jobext/app"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/app"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// answer plays an external admission check controller: it sets a unit's check state.
func answer(t *testing.T, ns, name, check string, state schedv1alpha1.AdmissionCheckStateType) {
	t.Helper()
	err := framework.Eventually(ctx(), 10*time.Second, func(c context.Context) (bool, error) {
		u := &schedv1alpha1.QueueUnit{}
		if err := env.Client.Get(c, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
			return false, err
		}
		for i := range u.Status.AdmissionChecks {
			if u.Status.AdmissionChecks[i].Name == check {
				u.Status.AdmissionChecks[i].State = state
				u.Status.AdmissionChecks[i].Message = "answered by the test"
				return true, env.Client.Status().Update(c, u)
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("answer %s=%s on %s: %v", check, state, name, err)
	}
}

func checkedQueue(t *testing.T, ns, quotaName string) {
	t.Helper()
	create(t, &schedv1alpha1.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "prov-req-check-" + ns},
		Spec: schedv1alpha1.AdmissionCheckSpec{ControllerName: "test.example/provisioning", RetryDelayMinutes: ptr.To[int64](0)}})
	create(t, utiltesting.MakeElasticQuota(quotaName).Namespace(ns).Max("cpu", "4").Obj())
	err := framework.Eventually(ctx(), 20*time.Second, func(c context.Context) (bool, error) {
		q := &schedv1alpha1.Queue{}
		if err := env.Client.Get(c, client.ObjectKey{Namespace: "koord-queue", Name: quotaName}, q); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		q.Spec.AdmissionChecks = []schedv1alpha1.AdmissionCheckWithSelector{{Name: "prov-req-check-" + ns,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"requires-provisioning": "true"}}}}
		return true, env.Client.Update(c, q)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A reserved unit waits for its checks holding quota; Ready dequeues it;
// Retry and Rejected release the quota (another unit is admitted meanwhile)
// and requeue it after the backoff.
func TestAdmissionChecks(t *testing.T) {
	const ns, q = "checks", "checked"
	startScheduler(t)
	createNamespace(t, ns)
	checkedQueue(t, ns, q)
	check := "prov-req-check-" + ns

	create(t, utiltesting.MakeQueueUnit("a", ns).Quota(q).Label("requires-provisioning", "true").Request("cpu", "4").Obj())
	a := waitPhase(t, ns, "a", schedv1alpha1.QueueUnitPhaseReserved)
	if len(a.Status.AdmissionChecks) != 1 || a.Status.AdmissionChecks[0].State != schedv1alpha1.CheckStatePending {
		t.Fatalf("checks = %+v, want one Pending", a.Status.AdmissionChecks)
	}
	if !meta.IsStatusConditionTrue(a.Status.Conditions, schedv1alpha1.ConditionQuotaReserved) || meta.IsStatusConditionTrue(a.Status.Conditions, schedv1alpha1.ConditionAdmitted) {
		t.Errorf("conditions of a reserved unit: %+v", a.Status.Conditions)
	}
	// Quota is held while reserved.
	create(t, utiltesting.MakeQueueUnit("unchecked", ns).Quota(q).Request("cpu", "1").Obj())
	// Decided and refused: it says why it waits, and is not admitted.
	if u := waitMessage(t, ns, "unchecked"); u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued {
		t.Fatalf("unchecked unit %s while a holds the quota", u.Status.Phase)
	}
	answer(t, ns, "a", check, schedv1alpha1.CheckStateReady)
	a = waitPhase(t, ns, "a", schedv1alpha1.QueueUnitPhaseDequeued)
	if !meta.IsStatusConditionTrue(a.Status.Conditions, schedv1alpha1.ConditionAdmitted) {
		t.Errorf("Admitted not True after all checks Ready: %+v", a.Status.Conditions)
	}
	setPhase(t, ns, "a", schedv1alpha1.QueueUnitPhaseSucceed)
	waitPhase(t, ns, "unchecked", schedv1alpha1.QueueUnitPhaseDequeued)
	setPhase(t, ns, "unchecked", schedv1alpha1.QueueUnitPhaseSucceed)

	for _, state := range []schedv1alpha1.AdmissionCheckStateType{schedv1alpha1.CheckStateRetry, schedv1alpha1.CheckStateRejected} {
		name := "b-" + strings.ToLower(string(state))
		create(t, utiltesting.MakeQueueUnit(name, ns).Quota(q).Label("requires-provisioning", "true").Request("cpu", "4").Obj())
		waitPhase(t, ns, name, schedv1alpha1.QueueUnitPhaseReserved)
		answer(t, ns, name, check, state)
		b := waitPhase(t, ns, name, schedv1alpha1.QueueUnitPhaseTimeoutBackoff)
		if b.Status.RequeueState == nil || b.Status.RequeueState.RequeueAt == nil || len(b.Status.Admissions) != 0 {
			t.Errorf("backoff status: %+v", b.Status)
		}
		// The quota is free during the backoff.
		other := "meanwhile-" + strings.ToLower(string(state))
		create(t, utiltesting.MakeQueueUnit(other, ns).Quota(q).Request("cpu", "4").Obj())
		waitPhase(t, ns, other, schedv1alpha1.QueueUnitPhaseDequeued)
		setPhase(t, ns, other, schedv1alpha1.QueueUnitPhaseSucceed)
		// After the backoff it is queued, reserved and asked again.
		b = waitPhase(t, ns, name, schedv1alpha1.QueueUnitPhaseReserved)
		if b.Status.AdmissionChecks[0].State != schedv1alpha1.CheckStatePending {
			t.Errorf("check state after requeue = %s, want Pending", b.Status.AdmissionChecks[0].State)
		}
		answer(t, ns, name, check, schedv1alpha1.CheckStateReady)
		waitPhase(t, ns, name, schedv1alpha1.QueueUnitPhaseDequeued)
		setPhase(t, ns, name, schedv1alpha1.QueueUnitPhaseSucceed)
	}
}

// Silence past the admission check timeout backs off like a Retry; a check
// that names no AdmissionCheck says so while the unit waits, and times out
// the same way: no missing check holds quota forever.
func TestAdmissionCheckTimeoutAndMissingCheck(t *testing.T) {
	const ns, q = "silence", "silent"
	startScheduler(t, func(o *app.Options) { o.Config.AdmissionCheckTimeout = &metav1.Duration{Duration: 4 * time.Second} })
	createNamespace(t, ns)
	checkedQueue(t, ns, q)
	create(t, utiltesting.MakeQueueUnit("quiet", ns).Quota(q).Label("requires-provisioning", "true").Request("cpu", "1").Obj())
	waitPhase(t, ns, "quiet", schedv1alpha1.QueueUnitPhaseReserved)
	u := waitPhase(t, ns, "quiet", schedv1alpha1.QueueUnitPhaseTimeoutBackoff)
	if c := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionQuotaReserved); c == nil || c.Reason != "AdmissionCheckTimeout" {
		t.Errorf("QuotaReserved = %+v, want reason AdmissionCheckTimeout", c)
	}
	if err := env.Client.Delete(ctx(), &schedv1alpha1.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "prov-req-check-" + ns}}); err != nil {
		t.Fatal(err)
	}
	u = waitPhase(t, ns, "quiet", schedv1alpha1.QueueUnitPhaseReserved)
	if err := framework.Eventually(ctx(), 20*time.Second, func(context.Context) (bool, error) {
		u = getUnit(t, ns, "quiet")
		return len(events(t, ns, "quiet", "AdmissionCheckNotFound")) == 1 && u.Status.Phase == schedv1alpha1.QueueUnitPhaseReserved &&
			u.Status.Message != "" && len(u.Status.AdmissionChecks) == 1, nil
	}); err != nil {
		dump(t, ns)
		t.Fatalf("missing check not reported: %+v", u.Status)
	}
	u = waitPhase(t, ns, "quiet", schedv1alpha1.QueueUnitPhaseTimeoutBackoff)
	if c := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionQuotaReserved); c == nil || c.Reason != "AdmissionCheckTimeout" ||
		!strings.Contains(c.Message, "not found") {
		t.Errorf("QuotaReserved = %+v, want reason AdmissionCheckTimeout naming the missing check", c)
	}
}

// startExtension runs koord-queue-controllers (job extension) in-process.
func startExtension(t *testing.T, ns string, gates string) {
	t.Helper()
	o := jobextapp.NewOptions()
	o.EnabledExtensions = []string{"job"}
	o.LeaderElect = false
	o.MetricsBindAddress = "0"
	o.HealthProbeBindAddress = "0"
	o.SkipNameValidation = true
	o.WatchNamespaces = []string{ns}
	o.FeatureGates = gates
	mgr, err := jobextapp.NewManager(env.Config, o, clock.RealClock{})
	if err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(c) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("extension: %v", err)
		}
	})
}

func suspendedJob(ns, name, quotaName string, annotations map[string]string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{schedv1alpha1.QuotaNameLabel: quotaName}, Annotations: annotations},
		Spec: batchv1.JobSpec{
			Suspend: ptr.To(true),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
				Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
			}}}},
		},
	}
}

// markRunning plays the Job controller (absent in envtest): one pod active and ready.
func markRunning(t *testing.T, ns, name string) {
	t.Helper()
	err := framework.Eventually(ctx(), 10*time.Second, func(c context.Context) (bool, error) {
		j := &batchv1.Job{}
		if err := env.Client.Get(c, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
			return false, err
		}
		now := metav1.Now()
		j.Status.StartTime = &now
		j.Status.Active, j.Status.Ready = 1, ptr.To[int32](1)
		return true, env.Client.Status().Update(c, j)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func waitSuspended(t *testing.T, ns, name string, want bool) {
	t.Helper()
	if err := framework.Eventually(ctx(), 30*time.Second, func(c context.Context) (bool, error) {
		j := &batchv1.Job{}
		if err := env.Client.Get(c, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
			return false, err
		}
		if ptr.Deref(j.Spec.Suspend, false) == want && want && j.Status.Active > 0 {
			// The Job controller would delete the pods of a suspended Job.
			j.Status.Active, j.Status.Ready = 0, ptr.To[int32](0)
			_ = env.Client.Status().Update(c, j)
		}
		return ptr.Deref(j.Spec.Suspend, false) == want, nil
	}); err != nil {
		dump(t, ns)
		t.Fatalf("job %s suspend != %v", name, want)
	}
}

// Deactivating a running job's unit suspends the real batch Job and releases
// its quota; activating it again queues it again.
func TestDeactivationSuspendsJob(t *testing.T) {
	const ns = "deactivate"
	createNamespace(t, ns)
	startScheduler(t, func(o *app.Options) { o.Gates.QueueUnitActive = true })
	startExtension(t, ns, "QueueUnitActive=true")
	create(t, utiltesting.MakeElasticQuota("deact").Namespace(ns).Max("cpu", "4").Obj())
	create(t, suspendedJob(ns, "worker", "deact", nil))
	waitPhase(t, ns, "worker", schedv1alpha1.QueueUnitPhaseDequeued)
	waitSuspended(t, ns, "worker", false)
	markRunning(t, ns, "worker")
	waitPhase(t, ns, "worker", schedv1alpha1.QueueUnitPhaseRunning)

	j := &batchv1.Job{}
	if err := env.Client.Get(ctx(), client.ObjectKey{Namespace: ns, Name: "worker"}, j); err != nil {
		t.Fatal(err)
	}
	j.Annotations = map[string]string{schedv1alpha1.ActiveAnnotation: "false"}
	if err := env.Client.Update(ctx(), j); err != nil {
		t.Fatal(err)
	}
	waitSuspended(t, ns, "worker", true)
	u := waitPhase(t, ns, "worker", schedv1alpha1.QueueUnitPhaseEnqueued)
	if c := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionEvicted); c == nil || c.Reason != schedv1alpha1.ReasonDeactivated {
		t.Errorf("Evicted = %+v, want reason Deactivated", c)
	}
	time.Sleep(time.Second)
	if p := getUnit(t, ns, "worker").Status.Phase; p != schedv1alpha1.QueueUnitPhaseEnqueued {
		t.Fatalf("inactive unit admitted again: %s", p)
	}
	if err := env.Client.Get(ctx(), client.ObjectKey{Namespace: ns, Name: "worker"}, j); err != nil {
		t.Fatal(err)
	}
	j.Annotations[schedv1alpha1.ActiveAnnotation] = "true"
	if err := env.Client.Update(ctx(), j); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, ns, "worker", schedv1alpha1.QueueUnitPhaseDequeued)
	waitSuspended(t, ns, "worker", false)
}

// A running job past its execution budget is suspended and not admitted
// again; the time it ran is banked.
func TestExecutionBudgetSuspendsJob(t *testing.T) {
	const ns = "budget"
	createNamespace(t, ns)
	startScheduler(t, func(o *app.Options) { o.Gates.MaximumExecutionTime = true })
	startExtension(t, ns, "MaximumExecutionTime=true")
	create(t, utiltesting.MakeElasticQuota("budget").Namespace(ns).Max("cpu", "4").Obj())
	create(t, suspendedJob(ns, "short", "budget", map[string]string{schedv1alpha1.MaxExecTimeSecondsAnnotation: "3"}))
	waitPhase(t, ns, "short", schedv1alpha1.QueueUnitPhaseDequeued)
	// Resumed first: a suspended Job has no active pods.
	waitSuspended(t, ns, "short", false)
	markRunning(t, ns, "short")
	waitPhase(t, ns, "short", schedv1alpha1.QueueUnitPhaseRunning)
	waitSuspended(t, ns, "short", true)
	u := waitPhase(t, ns, "short", schedv1alpha1.QueueUnitPhaseEnqueued)
	if c := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionEvicted); c == nil || c.Reason != schedv1alpha1.ReasonMaximumExecutionTimeExceeded {
		t.Errorf("Evicted = %+v, want reason MaximumExecutionTimeExceeded", c)
	}
	if got := ptr.Deref(u.Status.AccumulatedPastExecutionTimeSeconds, 0); got < 3 {
		t.Errorf("banked %ds, want at least 3", got)
	}
	if err := framework.Eventually(ctx(), 10*time.Second, func(context.Context) (bool, error) {
		return getUnit(t, ns, "short").Status.Message != "" && getUnit(t, ns, "short").Status.Phase == schedv1alpha1.QueueUnitPhaseEnqueued, nil
	}); err != nil {
		t.Errorf("no message on a unit whose budget is used up: %+v", getUnit(t, ns, "short").Status)
	}
}
