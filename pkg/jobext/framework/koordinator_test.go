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

package framework

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
)

// Messages koord-scheduler v1.7.0 writes into PodScheduled=False: its
// ElasticQuota plugin's refusals (pkg/scheduler/plugins/elasticquota
// plugin.go and plugin_helper.go) in the scheduling framework's FitError
// ("0/N nodes are available: <PreFilter message>. <PostFilter message>.").
const (
	koordQuota       = "0/3 nodes are available: Insufficient quotas, quotaName: q, runtime: cpu:4,memory:8Gi, used: cpu:4,memory:2Gi, pod's request: cpu:1,memory:1Gi, exceedDimensions: [cpu]."
	koordParentQuota = "0/3 nodes are available: Insufficient quotas, quotaNameTopo: [parent q], runtime: cpu:8, used: cpu:8, pod's request: cpu:1, exceedDimensions: [cpu]."
	koordNonPreempt  = "0/3 nodes are available: Insufficient non-preemptible quotas, quotaName: q, min: cpu:2, nonPreemptibleUsed: cpu:2, pod's request: cpu:1, exceedDimensions: [cpu]."
	koordPreemption  = "0/3 nodes are available: Insufficient quotas, quotaName: q, runtime: cpu:4, used: cpu:4, pod's request: cpu:1, exceedDimensions: [cpu]. preemption: No victims found on node n1 for preemptor pod p."
	noCPU            = "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
)

func TestRefusedForQuota(t *testing.T) {
	for _, tc := range []struct {
		name, reason, message string
		want                  bool
	}{
		{"its quota", corev1.PodReasonUnschedulable, koordQuota, true},
		{"a parent quota", corev1.PodReasonUnschedulable, koordParentQuota, true},
		{"non-preemptible beyond min", corev1.PodReasonUnschedulable, koordNonPreempt, true},
		{"with the PostFilter's message", corev1.PodReasonUnschedulable, koordPreemption, true},
		{"no node fits", corev1.PodReasonUnschedulable, noCPU, false},
		{"a hook plugin", corev1.PodReasonUnschedulable, "0/3 nodes are available: CheckPod failed for hook plugin x, err: no.", false},
		{"quota not found is a scheduler error", corev1.PodReasonSchedulerError, "Could not find the specified ElasticQuota", false},
		{"quota words with another reason", corev1.PodReasonSchedulerError, koordQuota, false},
		{"empty", "", "", false},
	} {
		if got := RefusedForQuota(tc.reason, tc.message); got != tc.want {
			t.Errorf("%s: RefusedForQuota(%q, %q) = %v, want %v", tc.name, tc.reason, tc.message, got, tc.want)
		}
	}
}

func TestTrimPod(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	gone := metav1.NewTime(at.Add(time.Minute))
	ctrlRef := metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "job-uid"}
	full := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "p", Namespace: "ns", UID: "pod-uid", ResourceVersion: "7", Generation: 2,
			Labels:            map[string]string{schedv1alpha1.QueueUnitLabel: "u"},
			Annotations:       map[string]string{"big": strings.Repeat("x", 100)},
			OwnerReferences:   []metav1.OwnerReference{ctrlRef},
			Finalizers:        []string{"f"},
			DeletionTimestamp: &gone,
			ManagedFields:     []metav1.ManagedFieldsEntry{{Manager: "kubelet"}},
		},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		Status: corev1.PodStatus{
			Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory.", HostIP: "10.0.0.1",
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodFailed"},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at, LastProbeTime: at},
				{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "TerminationByKubelet", Message: "memory", LastTransitionTime: at},
			},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "c"}},
		},
	}
	want := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "p", Namespace: "ns", UID: "pod-uid", ResourceVersion: "7",
			Labels:          map[string]string{schedv1alpha1.QueueUnitLabel: "u"},
			OwnerReferences: []metav1.OwnerReference{ctrlRef}, DeletionTimestamp: &gone,
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory.",
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at},
				{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "TerminationByKubelet", Message: "memory", LastTransitionTime: at},
			},
		},
	}
	got, err := TrimPod(full)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trimmed pod (-want +got):\n%s", diff)
	}
	again, _ := TrimPod(got)
	if diff := cmp.Diff(want, again); diff != "" {
		t.Errorf("trimmed twice (-want +got):\n%s", diff)
	}
	running := full.DeepCopy()
	running.Status.Phase, running.Status.Message = corev1.PodRunning, "kept only for failed pods"
	if got, _ := TrimPod(running); got.(*corev1.Pod).Status.Message != "" {
		t.Error("a running pod's status.message was kept")
	}
	other := &corev1.ConfigMap{}
	if got, _ := TrimPod(other); got != other {
		t.Error("a ConfigMap did not pass unchanged")
	}
}

// eventLog records events by the kind of object they regard ("job": the fake
// job's ConfigMap, or "unit").
type eventLog struct {
	mu     sync.Mutex
	events []string // "on reason: message"
}

func (l *eventLog) Eventf(regarding, _ runtime.Object, _, reason, _, note string, args ...any) {
	on := "job"
	if _, ok := regarding.(*schedv1alpha1.QueueUnit); ok {
		on = "unit"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, on+" "+reason+": "+fmt.Sprintf(note, args...))
}

// take returns the events of reason recorded since the last take of it.
func (l *eventLog) take(reason string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out, rest []string
	for _, e := range l.events {
		if strings.Contains(e, " "+reason+": ") {
			out = append(out, e)
		} else {
			rest = append(rest, e)
		}
	}
	l.events = rest
	return out
}

// admittedUnit is job's unit, Dequeued (Admitted=True) at at with quota q.
func admittedUnit(job *fakeJob, at time.Time) *schedv1alpha1.QueueUnit {
	return &schedv1alpha1.QueueUnit{
		ObjectMeta: metav1.ObjectMeta{Name: "j-fake", Namespace: "ns"},
		Spec: schedv1alpha1.QueueUnitSpec{Queue: "q", ConsumerRef: &corev1.ObjectReference{
			APIVersion: "v1", Kind: "ConfigMap", Name: "j", Namespace: "ns", UID: job.cm.UID,
		}},
		Status: schedv1alpha1.QueueUnitStatus{
			Phase:            schedv1alpha1.QueueUnitPhaseDequeued,
			Quota:            "q",
			LastAllocateTime: &metav1.Time{Time: at},
			Admissions:       []schedv1alpha1.Admission{{Name: "main", Replicas: 1}},
			Conditions: []metav1.Condition{
				{Type: schedv1alpha1.ConditionQuotaReserved, Status: metav1.ConditionTrue, Reason: queueunit.ReasonQuotaReserved, LastTransitionTime: metav1.NewTime(at)},
				{Type: schedv1alpha1.ConditionAdmitted, Status: metav1.ConditionTrue, Reason: queueunit.ReasonAdmitted, LastTransitionTime: metav1.NewTime(at)},
			},
		},
	}
}

// unitPod is a pod of unit j-fake (by its label only: not owned by the job).
func unitPod(name string, phase corev1.PodPhase, conditions ...corev1.PodCondition) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name),
			Labels: map[string]string{schedv1alpha1.QueueUnitLabel: "j-fake"}},
		Status: corev1.PodStatus{Phase: phase, Conditions: conditions},
	}
}

func unschedulable(message string, at time.Time) corev1.PodCondition {
	return corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: message, LastTransitionTime: metav1.NewTime(at)}
}

// refusalCase is a job whose unit was dequeued at t0, reconciled on a fake
// clock with a quota refusal timeout of a minute and a backoff of 30s.
type refusalCase struct {
	t0     time.Time
	clk    *clocktesting.FakeClock
	job    *fakeJob
	c      client.Client
	r      *Reconciler
	events *eventLog
}

func newRefusalCase(t *testing.T, status JobStatus, pods ...*corev1.Pod) *refusalCase {
	t.Helper()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sets := onePodSet()
	job := newFakeJob("j", map[string]string{schedv1alpha1.QuotaNameLabel: "q"}, nil, sets)
	objs := []client.Object{job.cm, admittedUnit(job, t0)}
	for _, p := range pods {
		objs = append(objs, p)
	}
	c := fakeClient(objs...)
	clk := clocktesting.NewFakeClock(t0)
	events := &eventLog{}
	r := NewReconciler(c, fakeExtension(sets, status), events, clk,
		ReconcilerOptions{QuotaRefusalTimeout: time.Minute, BackoffTimeout: 30 * time.Second})
	return &refusalCase{t0: t0, clk: clk, job: job, c: c, r: r, events: events}
}

// at reconciles the job at t0+d and returns the stored unit and the result.
func (rc *refusalCase) at(t *testing.T, d time.Duration) (*schedv1alpha1.QueueUnit, time.Duration) {
	t.Helper()
	rc.clk.SetTime(rc.t0.Add(d))
	res := reconcileJob(t, rc.r, "ns")
	u, err := storedUnit(rc.c, "ns")
	if err != nil {
		t.Fatal(err)
	}
	return u, res.RequeueAfter
}

// A pod refused for quota: one event on the job and one on the unit, the
// condition once, and a deadline a minute after the refusal began; then the
// job is suspended, its unit goes to TimeoutBackoff and, after the backoff,
// back to Enqueued.
func TestQuotaRefusalTimesOut(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rc := newRefusalCase(t, JobStatus{}, unitPod("p", corev1.PodPending, unschedulable(koordQuota, t0.Add(time.Second))))

	u, requeue := rc.at(t, 5*time.Second)
	c := meta.FindStatusCondition(u.Status.Conditions, queueunit.ConditionPodsRefusedByQuota)
	if c == nil || c.Status != metav1.ConditionTrue || !c.LastTransitionTime.Time.Equal(t0.Add(time.Second)) ||
		!strings.Contains(c.Message, "pod p") || !strings.Contains(c.Message, koordQuota) {
		t.Fatalf("condition %+v, want True since the pod's refusal, naming the pod and Koordinator's message", c)
	}
	if requeue != 56*time.Second {
		t.Errorf("requeue after %s, want the 56s left of the minute", requeue)
	}
	want := []string{"job PodsRefusedByQuota: " + c.Message, "unit PodsRefusedByQuota: " + c.Message}
	if diff := cmp.Diff(want, rc.events.take(EventPodsRefusedByQuota)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	u, requeue = rc.at(t, 30*time.Second)
	if got := rc.events.take(EventPodsRefusedByQuota); len(got) != 0 {
		t.Errorf("the refusal was told again: %q", got)
	}
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseDequeued || storedSuspended(t, rc.c, rc.job) || requeue != 31*time.Second {
		t.Errorf("before the deadline: phase %s, suspended %v, requeue %s; want Dequeued, running, 31s", u.Status.Phase, storedSuspended(t, rc.c, rc.job), requeue)
	}

	u, requeue = rc.at(t, 61*time.Second)
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseTimeoutBackoff || !storedSuspended(t, rc.c, rc.job) || requeue != 30*time.Second {
		t.Fatalf("at the deadline: phase %s, suspended %v, requeue %s; want TimeoutBackoff, suspended, the 30s backoff", u.Status.Phase, storedSuspended(t, rc.c, rc.job), requeue)
	}
	if !queueunit.InRunningTimeoutBackoff(u) || len(u.Status.Admissions) != 0 {
		t.Errorf("not the running timeout's backoff, or admissions kept: %+v", u.Status)
	}
	qr := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionQuotaReserved)
	if !strings.Contains(qr.Message, "quota q") || !strings.Contains(qr.Message, koordQuota) {
		t.Errorf("QuotaReserved message %q does not name the quota and Koordinator's refusal", qr.Message)
	}
	if c := meta.FindStatusCondition(u.Status.Conditions, queueunit.ConditionPodsRefusedByQuota); c.Status != metav1.ConditionFalse {
		t.Errorf("refusal outlived the admission: %+v", c)
	}
	if got := rc.events.take(EventRunningTimeout); len(got) != 1 || !strings.Contains(got[0], "quota q") {
		t.Errorf("timeout events %q, want one naming the quota", got)
	}

	// The refused pod is still there: the backoff is over, but the unit
	// waits for it (a pending pod may yet be bound).
	u, _ = rc.at(t, 91*time.Second)
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseTimeoutBackoff {
		t.Errorf("after the backoff, with the refused pod left: phase %s, want TimeoutBackoff", u.Status.Phase)
	}
	// The Job controller deletes it, as it does the pods of a suspended job.
	if err := rc.c.Delete(context.Background(), unitPod("p", corev1.PodPending)); err != nil {
		t.Fatal(err)
	}
	u, _ = rc.at(t, 92*time.Second)
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued {
		t.Errorf("after the backoff, the pod gone: phase %s, want Enqueued", u.Status.Phase)
	}
}

// A pod of the unit that runs, by its phase or by the job's status, stops
// the deadline; the refusal is still told.
func TestQuotaRefusalWithARunningPod(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	refused := func() *corev1.Pod { return unitPod("p", corev1.PodPending, unschedulable(koordQuota, t0)) }
	for name, rc := range map[string]*refusalCase{
		"a labelled pod runs":           newRefusalCase(t, JobStatus{}, refused(), unitPod("r", corev1.PodRunning)),
		"the job reports a pod running": newRefusalCase(t, onePodRunning(), refused()),
	} {
		t.Run(name, func(t *testing.T) {
			rc.at(t, time.Second)
			u, requeue := rc.at(t, 10*time.Minute)
			if storedSuspended(t, rc.c, rc.job) || !queueunit.HoldsQuota(u.Status.Phase) || requeue != 0 {
				t.Errorf("phase %s, suspended %v, requeue %s; want the job left to run, no deadline", u.Status.Phase, storedSuspended(t, rc.c, rc.job), requeue)
			}
			if _, ok := queueunit.RefusedByQuotaSince(u); !ok {
				t.Error("the refusal is not told")
			}
			if got := rc.events.take(EventPodsRefusedByQuota); len(got) != 2 {
				t.Errorf("events %q, want one on the job and one on the unit", got)
			}
		})
	}
}

// A pod unschedulable for another reason than quota changes nothing.
func TestUnschedulableNotForQuota(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rc := newRefusalCase(t, JobStatus{}, unitPod("p", corev1.PodPending, unschedulable(noCPU, t0)))
	for _, d := range []time.Duration{time.Second, 10 * time.Minute} {
		u, requeue := rc.at(t, d)
		if meta.FindStatusCondition(u.Status.Conditions, queueunit.ConditionPodsRefusedByQuota) != nil ||
			u.Status.Phase != schedv1alpha1.QueueUnitPhaseDequeued || storedSuspended(t, rc.c, rc.job) || requeue != 0 {
			t.Errorf("at +%s: conditions %+v, phase %s, requeue %s; want nothing changed", d, u.Status.Conditions, u.Status.Phase, requeue)
		}
	}
	if got := rc.events.take(EventPodsRefusedByQuota); len(got) != 0 {
		t.Errorf("events %q, want none", got)
	}
}

// The refusal ends when the pod is scheduled: the condition turns False, and
// a new refusal is told again.
func TestQuotaRefusalEnds(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rc := newRefusalCase(t, JobStatus{}, unitPod("p", corev1.PodPending, unschedulable(koordQuota, t0)))
	rc.at(t, time.Second)
	setPodStatus(t, rc.c, "p", corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(2 * time.Second))}}})
	u, requeue := rc.at(t, 3*time.Second)
	if c := meta.FindStatusCondition(u.Status.Conditions, queueunit.ConditionPodsRefusedByQuota); c == nil || c.Status != metav1.ConditionFalse || requeue != 0 {
		t.Errorf("after the pod was scheduled: condition %+v, requeue %s; want False, no deadline", c, requeue)
	}
	setPodStatus(t, rc.c, "p", corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{unschedulable(koordParentQuota, t0.Add(4*time.Second))}})
	rc.at(t, 5*time.Second)
	if got := rc.events.take(EventPodsRefusedByQuota); len(got) != 4 {
		t.Errorf("events %q, want two refusals, each on the job and the unit", got)
	}
}

// A pod evicted by someone else is told once, on the job and the unit,
// however often the job is reconciled; the job is left alone.
func TestPodsEvictedElsewhere(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	disrupted := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI",
		Message: "Eviction API: evicting", LastTransitionTime: metav1.NewTime(t0)}
	rc := newRefusalCase(t, onePodRunning(), unitPod("a", corev1.PodRunning, disrupted), unitPod("b", corev1.PodRunning))
	for i := range 3 {
		rc.at(t, time.Duration(i+1)*time.Second)
	}
	want := []string{
		"job PodsEvictedElsewhere: pod a was evicted by someone other than koord-queue (EvictionByEvictionAPI: Eviction API: evicting); the unit keeps its quota and the job is left to its operator",
		"unit PodsEvictedElsewhere: pod a was evicted by someone other than koord-queue (EvictionByEvictionAPI: Eviction API: evicting); the unit keeps its quota and the job is left to its operator",
	}
	if diff := cmp.Diff(want, rc.events.take(EventPodsEvictedElsewhere)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// The kubelet evicts b (no condition): told once too.
	setPodStatus(t, rc.c, "b", corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory."})
	for i := range 3 {
		rc.at(t, time.Duration(i+10)*time.Second)
	}
	got := rc.events.take(EventPodsEvictedElsewhere)
	if len(got) != 2 || !strings.Contains(got[0], "pod b") || !strings.Contains(got[0], "Evicted: The node was low on resource: memory.") {
		t.Errorf("events %q, want b's eviction once on the job and once on the unit", got)
	}
	u, _ := rc.at(t, time.Minute)
	if storedSuspended(t, rc.c, rc.job) || u.Status.Phase != schedv1alpha1.QueueUnitPhaseRunning {
		t.Errorf("suspended %v, phase %s: the job was not left alone", storedSuspended(t, rc.c, rc.job), u.Status.Phase)
	}
}

func setPodStatus(t *testing.T, c client.Client, name string, status corev1.PodStatus) {
	t.Helper()
	pod := &corev1.Pod{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, pod); err != nil {
		t.Fatal(err)
	}
	pod.Status = status
	if err := c.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
}
