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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// unsuspendedJob is a Job with the quota label only, as a user writes it who
// never heard of spec.suspend.
func unsuspendedJob(name, quota, cpu string, runFor time.Duration) client.Object {
	j := suspendedJob(name, quota, cpu, runFor)
	j.Spec.Suspend = ptr.To(false)
	return j
}

// jobPods lists the pods of a Job.
func jobPods(ctx context.Context, ns, jobName string) (int, error) {
	pods := &corev1.PodList{}
	if err := env.Client.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"job-name": jobName}); err != nil {
		return 0, err
	}
	return len(pods.Items), nil
}

// TestUnsuspendedJobWaitsForItsUnit: a batch Job submitted with the quota
// label and suspend: false is stored suspended by the webhook, and the
// kube-controller-manager (the stock operator of Job) makes no pod for it
// before its unit is Dequeued, while a first Job holds the quota; then it
// runs to completion.
func TestUnsuspendedJobWaitsForItsUnit(t *testing.T) {
	if !env.QueueRunning {
		t.Skip("koord-queue is not running")
	}
	elasticQuota(t, "wh-q", "1", "4Gi", nil)
	first := unsuspendedJob("wh-first", "wh-q", "1", 6*time.Second)
	create(t, first)
	second := unsuspendedJob("wh-second", "wh-q", "1", time.Second)
	create(t, second)
	for _, j := range []client.Object{first, second} {
		if s, err := jobSuspended(ctxFor(t), "default", j.GetName()); err != nil || !s {
			// The first may be admitted and resumed already: then its unit says so.
			if p, _ := phaseOf(ctxFor(t), "default", j.GetName()); j == second || !admitted(p) {
				t.Errorf("Job %s created with suspend: false is not held (suspended %v, err %v)", j.GetName(), s, err)
			}
		}
	}
	// Sample until the second unit is admitted: a pod of the second Job seen
	// while its unit (read after the pods) is not admitted is a violation.
	samples, waitingSamples := 0, 0
	eventuallyWithin(t, 2*timeout, "wh-second dequeued", func(ctx context.Context) (bool, error) {
		n, err := jobPods(ctx, "default", "wh-second")
		if err != nil {
			return false, err
		}
		p, err := phaseOf(ctx, "default", "wh-second")
		if err != nil {
			return false, err
		}
		samples++
		if !admitted(p) {
			waitingSamples++
			if n > 0 {
				t.Fatalf("Job wh-second has %d pods while its unit is %q", n, p)
			}
		}
		return admitted(p), nil
	})
	if waitingSamples == 0 {
		t.Fatalf("no sample taken while wh-second waited (%d samples): the first Job did not hold the quota", samples)
	}
	t.Logf("%d samples, %d while wh-second waited, no pod among them", samples, waitingSamples)
	eventually(t, "wh-second complete", func(ctx context.Context) (bool, error) { return jobComplete(ctx, "default", "wh-second") })
	waitPhase(t, "default", "wh-second", "Succeed", isPhase(schedv1alpha1.QueueUnitPhaseSucceed))
}

// TestJobOfMissingQuotaIsHeld: a Job naming a quota that does not exist is
// held (no pod) and its unit says the queue is missing.
func TestJobOfMissingQuotaIsHeld(t *testing.T) {
	if !env.QueueRunning {
		t.Skip("koord-queue is not running")
	}
	create(t, unsuspendedJob("wh-nowhere", "wh-no-such-quota", "1", time.Second))
	eventually(t, "unit of wh-nowhere says its queue is missing", func(ctx context.Context) (bool, error) {
		qu, err := queueUnit(ctx, "default", "wh-nowhere")
		if err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return strings.Contains(qu.Status.Message, "wh-no-such-quota") && strings.Contains(qu.Status.Message, "not found"), nil
	})
	consistently(t, hold, "wh-nowhere held without pods", func(ctx context.Context) error {
		s, err := jobSuspended(ctx, "default", "wh-nowhere")
		if err != nil {
			return err
		}
		n, err := jobPods(ctx, "default", "wh-nowhere")
		if err != nil {
			return err
		}
		if !s || n > 0 {
			return fmt.Errorf("suspended %v, %d pods", s, n)
		}
		return nil
	})
}
