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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
)

// preemptionScenario runs a 2 CPU job of priority 0 in a 4 CPU quota, then
// submits a 4 CPU job of priority 100 and waits until its unit says why it
// waits. It returns the two job names.
func preemptionScenario(t *testing.T, quota string, annotations map[string]string, lowRunsFor time.Duration) (low, high string) {
	t.Helper()
	q := &eqv1alpha1.ElasticQuota{
		ObjectMeta: metav1.ObjectMeta{Name: quota, Namespace: "default", Annotations: annotations},
		Spec: eqv1alpha1.ElasticQuotaSpec{Max: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"),
		}},
	}
	create(t, q)
	eventually(t, "Queue koord-queue/"+quota, func(ctx context.Context) (bool, error) {
		queue := &schedv1alpha1.Queue{}
		err := get(ctx, schedv1alpha1.QueueNamespace, quota, queue)
		for k, v := range annotations {
			if err == nil && queue.Annotations[k] != v {
				return false, fmt.Errorf("annotation %s = %q", k, queue.Annotations[k])
			}
		}
		return err == nil, err
	})
	low, high = quota+"-low", quota+"-high"
	lowJob := suspendedJob(low, quota, "2", lowRunsFor)
	lowJob.Annotations = map[string]string{schedv1alpha1.PriorityAnnotation: "0"}
	create(t, lowJob)
	waitPhase(t, "default", low, "dequeued", admitted)
	runningPodOnFakeNode(t, "default", low)
	highJob := suspendedJob(high, quota, "4", 2*time.Second)
	highJob.Annotations = map[string]string{schedv1alpha1.PriorityAnnotation: "100"}
	create(t, highJob)
	eventually(t, "QueueUnit "+high+" says why it waits", func(ctx context.Context) (bool, error) {
		u, err := queueUnit(ctx, "default", high)
		return err == nil && u.Status.Message != "", err
	})
	return low, high
}

// TestRunningJobIsNotPreemptedByDefault: a higher-priority job waits for a
// running lower-priority job of the same quota to finish; nothing evicts it.
func TestRunningJobIsNotPreemptedByDefault(t *testing.T) {
	low, high := preemptionScenario(t, "e2e-no-preempt", nil, 15*time.Second)
	consistently(t, hold, "the running low-priority job keeps running", func(ctx context.Context) error {
		if done, err := jobComplete(ctx, "default", low); err != nil || done {
			return err
		}
		if suspended, err := jobSuspended(ctx, "default", low); err != nil || suspended {
			return fmt.Errorf("low job suspended (err %w): preempted by default", err)
		}
		if evicted, err := hasEvent(ctx, "default", low, "Preempted"); err != nil || evicted {
			return fmt.Errorf("the low job's unit has a Preempted event (err %w)", err)
		}
		return nil
	})
	eventually(t, "the low job completes", func(ctx context.Context) (bool, error) { return jobComplete(ctx, "default", low) })
	waitPhase(t, "default", high, "dequeued after the low job finished", admitted)
}

// TestPreemptionOptIn: with koord-queue/preemption-policy: LowerPriority on
// the quota, the higher-priority job evicts the running one once its
// protection period has passed, and the evicted job is queued again.
func TestPreemptionOptIn(t *testing.T) {
	low, high := preemptionScenario(t, "e2e-preempt", map[string]string{
		schedv1alpha1.PreemptionPolicyAnnotation: string(schedv1alpha1.PreemptionLowerPriority),
	}, 5*time.Minute)
	waitPhase(t, "default", high, "dequeued by preemption", admitted)
	eventually(t, "the low job is suspended and queued again", func(ctx context.Context) (bool, error) {
		suspended, err := jobSuspended(ctx, "default", low)
		if err != nil || !suspended {
			return false, err
		}
		p, err := phaseOf(ctx, "default", low)
		return p == schedv1alpha1.QueueUnitPhaseEnqueued, err
	})
	if ok, err := hasEvent(ctx(t), "default", low, "Preempted"); err != nil || !ok {
		t.Errorf("no Preempted event on %s (err %v)", low, err)
	}
}
