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

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/test/cluster"
)

// needKoordinator skips a case that needs Koordinator running.
func needKoordinator(t *testing.T) {
	t.Helper()
	if !koordinatorOn() {
		t.Skip("needs Koordinator: run with E2E_KOORDINATOR=1 (make test-e2e does, in its second run)")
	}
}

// checkKoordinatorBook checks, with Koordinator on, that koord-scheduler
// charged a running job to the quota koord-queue charged: its pods carry the
// quota label and the quota's status.used (written by koord-scheduler) shows
// cpu. The guide's quick start (TestQuickStart) calls it while my-job runs.
func checkKoordinatorBook(t *testing.T, ns, jobName, quota, cpu string) {
	t.Helper()
	if !koordinatorOn() {
		return
	}
	ctx := ctxFor(t)
	pods := &corev1.PodList{}
	if err := env.Client.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"job-name": jobName}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if got := p.Labels[schedv1alpha1.QuotaNameLabel]; got != quota {
			t.Errorf("pod %s of job %s carries quota label %q, want %q", p.Name, jobName, got, quota)
		}
	}
	want := resource.MustParse(cpu)
	eventually(t, fmt.Sprintf("ElasticQuota %s/%s's status.used to show cpu %s (koord-scheduler's book)", ns, quota, cpu), func(ctx context.Context) (bool, error) {
		eq := &eqv1alpha1.ElasticQuota{}
		if err := get(ctx, ns, quota, eq); err != nil {
			return false, err
		}
		used := eq.Status.Used[corev1.ResourceCPU]
		if used.Cmp(want) != 0 {
			return false, fmt.Errorf("status.used %v", eq.Status.Used)
		}
		return true, nil
	})
}

// TestKoordinatorPlainPodCountsAgainstQuota: a plain Pod of 2 CPU labelled
// with a quota of max 4 runs; a 4-CPU job of that quota is not admitted while
// it runs (its unit says why), and runs once the pod is gone, with no pod
// refused by koord-scheduler for usage koord-queue did not count.
func TestKoordinatorPlainPodCountsAgainstQuota(t *testing.T) {
	needKoordinator(t)
	const quota = "e2e-koord-plain"
	createQuota(t, quotaSpec{name: quota, max: "4"})
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: quota + "-pod", Namespace: "default",
			Labels:      map[string]string{schedv1alpha1.QuotaNameLabel: quota},
			Annotations: map[string]string{"pod-complete.stage.kwok.x-k8s.io/delay": "10m"},
		},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "work", Image: "busybox:stable", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")},
			}}},
		},
	}
	create(t, pod)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), pod, client.GracePeriodSeconds(0)) })
	eventually(t, "the plain pod Running", func(ctx context.Context) (bool, error) {
		p := &corev1.Pod{}
		err := get(ctx, "default", pod.Name, p)
		return err == nil && p.Status.Phase == corev1.PodRunning, err
	})

	const name = quota + "-job"
	jobs(t, quota, []string{name}, "4", 5*time.Second)
	eventually(t, "QueueUnit "+name+" says why it waits", func(ctx context.Context) (bool, error) {
		u, err := queueUnit(ctx, "default", name)
		return err == nil && u.Status.Message != "", err
	})
	consistently(t, hold, "the job waits while the plain pod runs", func(ctx context.Context) error {
		u, err := queueUnit(ctx, "default", name)
		if err != nil {
			return err
		}
		if admitted(u.Status.Phase) {
			return fmt.Errorf("admitted (phase %s) beside 2 CPU of plain pods in a max of 4", u.Status.Phase)
		}
		return nil
	})
	u, err := queueUnit(ctx(t), "default", name)
	if err != nil {
		t.Fatal(err)
	}
	if msg := strings.ToLower(u.Status.Message); !strings.Contains(msg, "pod") {
		t.Errorf("the unit's message does not name the usage of pods not managed by koord-queue: %q", u.Status.Message)
	}

	if err := env.Client.Delete(ctx(t), pod, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, "default", name, "dequeued once the plain pod is gone", admitted)
	runningPodOnFakeNode(t, "default", name)
	refusedForQuota(t, "default", name)
}

// refusedForQuota fails when koord-scheduler refused a pod of the job for
// quota while its book still held other usage of the quota (now, or by a
// FailedScheduling event): that is koord-queue admitting beside usage it
// did not count. A refusal whose "used" shows no cpu is koord-scheduler's
// runtime lagging its own pod events (it has the pod in its scheduling queue
// before its quota plugin counts the pod's request); it retries and
// schedules, and the job must then run, which the caller checks.
func refusedForQuota(t *testing.T, ns, jobName string) {
	t.Helper()
	ctx := ctxFor(t)
	judge := func(pod, msg string) {
		if !strings.Contains(strings.ToLower(msg), "quota") {
			return
		}
		used, ok := refusalUsedCPU(msg)
		if !ok || !used.IsZero() {
			t.Errorf("pod %s refused by koord-scheduler for quota beside other usage: %s", pod, msg)
			return
		}
		t.Logf("pod %s refused once by koord-scheduler with nothing used (its runtime behind its pod events), then retried: %s", pod, msg)
	}
	pods := &corev1.PodList{}
	if err := env.Client.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"job-name": jobName}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				judge(p.Name, c.Message)
			}
		}
	}
	events := &corev1.EventList{}
	if err := env.Client.List(ctx, events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == "Pod" && strings.HasPrefix(e.InvolvedObject.Name, jobName+"-") && e.Reason == "FailedScheduling" {
			judge(e.InvolvedObject.Name, e.Message)
		}
	}
}

// refusalUsedCPU reads the cpu of "used: cpu:2,memory:1Gi, pod's request"
// in koord-scheduler's refusal; a used list without cpu is zero.
func refusalUsedCPU(msg string) (resource.Quantity, bool) {
	_, rest, ok := strings.Cut(msg, "used: ")
	if !ok {
		return resource.Quantity{}, false
	}
	list, _, ok := strings.Cut(rest, ", pod's request")
	if !ok {
		return resource.Quantity{}, false
	}
	for _, item := range strings.Split(list, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(item), ":")
		if ok && name == "cpu" {
			q, err := resource.ParseQuantity(value)
			return q, err == nil
		}
	}
	return resource.Quantity{}, true
}

// TestReclaimHasOneVictim: a job borrowing its sibling's min is reclaimed
// once the sibling needs it back: one victim, one Preempted event, one
// suspended job. Quotas' min names cpu only and the jobs ask for memory too,
// as most do. Run in both passes: beside Koordinator it also checks that the
// victim's pods are not evicted by Koordinator as well.
func TestReclaimHasOneVictim(t *testing.T) {
	const parent, lender, borrower = "e2e-koord-reclaim", "e2e-koord-reclaim-lender", "e2e-koord-reclaim-borrower"
	createQuota(t, quotaSpec{name: parent, min: "4", max: "4", labels: map[string]string{eqv1alpha1.IsParentLabel: "true"}})
	createQuota(t, quotaSpec{name: lender, parent: parent, min: "2", max: "4"})
	createQuota(t, quotaSpec{name: borrower, parent: parent, min: "2", max: "4"})

	borrowing := names(borrower, 2)
	jobs(t, borrower, borrowing, "2", 10*time.Minute)
	eventually(t, "both borrower jobs admitted (2 CPU borrowed)", func(ctx context.Context) (bool, error) {
		n, err := admittedCount(ctx, borrowing)
		return n == 2, err
	})
	for _, j := range borrowing {
		runningPodOnFakeNode(t, "default", j)
	}
	const claim = lender + "-job"
	jobs(t, lender, []string{claim}, "2", 5*time.Second)
	waitPhase(t, "default", claim, "dequeued by reclaiming its min", admitted)
	runningPodOnFakeNode(t, "default", claim)

	victims := 0
	for _, j := range borrowing {
		preempted, err := countEvents(ctx(t), "default", j, "Preempted")
		if err != nil {
			t.Fatal(err)
		}
		suspended, err := jobSuspended(ctx(t), "default", j)
		if err != nil {
			t.Fatal(err)
		}
		if preempted > 1 {
			t.Errorf("%s has %d Preempted events, want at most one", j, preempted)
		}
		if preempted > 0 || suspended {
			victims++
		}
	}
	if victims != 1 {
		t.Errorf("%d victims among %v, want exactly one", victims, borrowing)
	}
	pods := &corev1.PodList{}
	if err := env.Client.List(ctx(t), pods, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if !strings.HasPrefix(p.Name, borrower) {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason != "" &&
				!strings.Contains(c.Reason, "DeletionByPodGC") && !strings.Contains(c.Reason, "TerminationByKubelet") {
				if strings.Contains(strings.ToLower(c.Message), "koord") || c.Reason == "PreemptionByScheduler" {
					t.Errorf("pod %s also evicted by Koordinator: %s %s", p.Name, c.Reason, c.Message)
				}
			}
		}
	}
}

func countEvents(ctx context.Context, ns, name, reason string) (int, error) {
	events := &corev1.EventList{}
	if err := env.Client.List(ctx, events, client.InNamespace(ns)); err != nil {
		return 0, err
	}
	n := 0
	for _, e := range events.Items {
		if e.InvolvedObject.Name == name && e.Reason == reason {
			n += max(int(e.Count), 1)
		}
	}
	return n, nil
}

// TestKoordinatorSystemQuotasGetNoQueue: koord-scheduler's own quotas exist
// and koord-queue makes no Queue for them.
func TestKoordinatorSystemQuotasGetNoQueue(t *testing.T) {
	needKoordinator(t)
	for _, name := range cluster.KoordinatorSystemQuotas {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("scheduling.sigs.k8s.io/v1alpha1")
		u.SetKind("ElasticQuota")
		if err := get(ctx(t), cluster.KoordinatorNamespace, name, u); err != nil {
			t.Fatalf("Koordinator's system quota %s: %v", name, err)
		}
	}
	for _, name := range cluster.KoordinatorSystemQuotas {
		absent(t, "Queue for system quota "+name, &schedv1alpha1.Queue{}, schedv1alpha1.QueueNamespace, name)
	}
}
