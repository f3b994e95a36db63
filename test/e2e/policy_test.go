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

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// TestQueuesFromElasticQuotaExamples applies the three ElasticQuota examples of
// 队列策略 as written and checks the Queue koord-queue creates for each: same
// name, in namespace koord-queue, priority 1000, the policy of the label and
// the koord-queue/* annotations copied.
func TestQueuesFromElasticQuotaExamples(t *testing.T) {
	for _, tc := range []struct {
		file, name, policy string
		annotations        map[string]string
	}{
		{"elasticquota-priority.yaml", "priority-queue", "Priority", nil},
		{"elasticquota-block.yaml", "block-queue", "Block", nil},
		{"elasticquota-intelligent.yaml", "intelligent-queue", "Intelligent", map[string]string{"koord-queue/priority-threshold": "5"}},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			applyGuide(t, tc.file)
			eventually(t, "Queue koord-queue/"+tc.name, func(ctx context.Context) (bool, error) {
				q := &schedv1alpha1.Queue{}
				if err := get(ctx, "koord-queue", tc.name, q); err != nil {
					return false, err
				}
				if string(q.Spec.QueuePolicy) != tc.policy || q.Spec.Priority == nil || *q.Spec.Priority != 1000 {
					return false, fmt.Errorf("spec %+v", q.Spec)
				}
				for k, v := range tc.annotations {
					if q.Annotations[k] != v {
						return false, fmt.Errorf("annotation %s = %q, want %q", k, q.Annotations[k], v)
					}
				}
				return true, nil
			})
		})
	}
}

// policyScenario fills a 10 CPU quota with a 6 CPU job, then submits a big
// 8 CPU job (does not fit now, would fit an empty quota) and after it a small
// 2 CPU job (fits now). It returns once both units exist.
func policyScenario(t *testing.T, quota, policy string) (filler, big, small string) {
	t.Helper()
	elasticQuota(t, quota, "10", "20Gi", map[string]string{"koord-queue/queue-policy": policy})
	eventually(t, "Queue koord-queue/"+quota, func(ctx context.Context) (bool, error) {
		q := &schedv1alpha1.Queue{}
		err := get(ctx, "koord-queue", quota, q)
		return err == nil && string(q.Spec.QueuePolicy) == policy, err
	})
	filler, big, small = quota+"-a-filler", quota+"-b-big", quota+"-c-small"
	create(t, suspendedJob(filler, quota, "6", 20*time.Second))
	waitPhase(t, "default", filler, "dequeued", admitted)
	runningPodOnFakeNode(t, "default", filler)
	// Same priority: the big job is ahead by creation time (and by name).
	create(t, suspendedJob(big, quota, "8", 2*time.Second))
	waitPhase(t, "default", big, "Enqueued", isPhase(schedv1alpha1.QueueUnitPhaseEnqueued))
	create(t, suspendedJob(small, quota, "2", 2*time.Second))
	eventually(t, "QueueUnit "+small, func(ctx context.Context) (bool, error) {
		_, err := queueUnit(ctx, "default", small)
		return err == nil, err
	})
	return filler, big, small
}

// TestBlockHoldsBackSmallerJob: under Block, a job that does not fit holds
// back a later job of the same quota even though that one would fit; both go
// once the running job finishes.
func TestBlockHoldsBackSmallerJob(t *testing.T) {
	filler, big, small := policyScenario(t, "e2e-block", "Block")
	consistently(t, hold, "the small job held behind the big one", func(ctx context.Context) error {
		done, err := jobComplete(ctx, "default", filler)
		if err != nil || done {
			return err // the filler ended: nothing more to see here
		}
		p, err := phaseOf(ctx, "default", small)
		if err != nil {
			return err
		}
		if admitted(p) {
			return fmt.Errorf("small job admitted (phase %s) while the big one waits under Block", p)
		}
		return nil
	})
	waitPhase(t, "default", big, "dequeued after the filler finished", admitted)
	waitPhase(t, "default", small, "dequeued after the big one", admitted)
	waitJobReleased(t, "default", small)
}

// TestPriorityAdmitsSmallerJob: under Priority the same small job is admitted
// at once, while the big one keeps waiting for the running job to finish.
func TestPriorityAdmitsSmallerJob(t *testing.T) {
	filler, big, small := policyScenario(t, "e2e-priority", "Priority")
	waitPhase(t, "default", small, "dequeued past the waiting big job", admitted)
	waitJobReleased(t, "default", small)
	done, err := jobComplete(ctx(t), "default", filler)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := phaseOf(ctx(t), "default", big); err != nil || (!done && admitted(p)) {
		t.Fatalf("big job phase %q (err %v) while the filler still runs: it cannot fit", p, err)
	}
	waitPhase(t, "default", big, "dequeued after the filler finished", admitted)
}

func ctx(t *testing.T) context.Context { return t.Context() }
