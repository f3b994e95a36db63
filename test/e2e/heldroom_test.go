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

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// TestBlockedHighPriorityJobOnEachPolicy plays issue #30's numbers on each
// policy: a quota of max 4 CPU; a running 2-CPU job of priority 1; a 4-CPU
// job of priority 100 that waits; then a 1-CPU job of priority 1. Priority
// admits the small job (it skips what does not fit) unless its queue opts
// into holding room for higher priority; Block holds it behind the head of
// its quota; Intelligent's low band may not take room from a quota on which
// a high-band job waits.
func TestBlockedHighPriorityJobOnEachPolicy(t *testing.T) {
	for _, tc := range []struct {
		name, quota, policy string
		hold                bool
		// reason and message are what the small job waits with; "" when it
		// is admitted. %s is the big job's name.
		reason, message string
	}{
		{name: "Priority", quota: "e2e-hr-priority", policy: "Priority"},
		{name: "Priority-hold-room", quota: "e2e-hr-priority-hold", policy: "Priority", hold: true,
			reason: "RoomHeldForHigherPriority", message: "waits behind default/%s (priority 100, quota e2e-hr-priority-hold, requests 4 cpu), for which room is held"},
		{name: "Block", quota: "e2e-hr-block", policy: "Block",
			reason: "WaitingInLine", message: "waiting behind default/%s, the unit directly ahead of it in quota e2e-hr-block of Block queue e2e-hr-block"},
		{name: "Intelligent", quota: "e2e-hr-intelligent", policy: "Intelligent",
			reason: "HighBandWaiting", message: "held back: high-band unit default/%s (priority 100, koord-queue/priority-threshold 4) of Intelligent queue e2e-hr-intelligent waits for quota e2e-hr-intelligent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			annotations := map[string]string{}
			if tc.hold {
				annotations[schedv1alpha1.HoldRoomAnnotation] = "true"
			}
			createQuota(t, quotaSpec{name: tc.quota, max: "4",
				labels: map[string]string{schedv1alpha1.QueuePolicyLabel: tc.policy}, annotations: annotations})
			eventually(t, "Queue koord-queue/"+tc.quota, func(ctx context.Context) (bool, error) {
				q := &schedv1alpha1.Queue{}
				err := get(ctx, "koord-queue", tc.quota, q)
				return err == nil && string(q.Spec.QueuePolicy) == tc.policy, err
			})
			running, big, small := tc.quota+"-running", tc.quota+"-big", tc.quota+"-small"
			create(t, priorityJob(running, tc.quota, "2", 1, 2*time.Minute))
			waitPhase(t, "default", running, "dequeued", admitted)
			runningPodOnFakeNode(t, "default", running)
			create(t, priorityJob(big, tc.quota, "4", 100, 2*time.Second))
			eventually(t, "the big job waits for quota", func(ctx context.Context) (bool, error) {
				u, err := queueUnit(ctx, "default", big)
				if err != nil {
					return false, err
				}
				if u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued || !strings.Contains(u.Status.Message, "insufficient quota") {
					return false, fmt.Errorf("phase %q, message %q", u.Status.Phase, u.Status.Message)
				}
				return true, nil
			})
			create(t, priorityJob(small, tc.quota, "1", 1, 2*time.Second))
			if tc.reason == "" {
				waitPhase(t, "default", small, "dequeued past the waiting big job", admitted)
				waitJobReleased(t, "default", small)
				if p, err := phaseOf(ctx(t), "default", big); err != nil || admitted(p) {
					t.Fatalf("big job phase %q (err %v) while the 2-CPU job runs: it cannot fit", p, err)
				}
				return
			}
			want := fmt.Sprintf(tc.message, big)
			eventually(t, "the small job says why it waits", func(ctx context.Context) (bool, error) {
				u, err := queueUnit(ctx, "default", small)
				if err != nil {
					return false, err
				}
				c := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionQuotaReserved)
				if u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued || !strings.HasPrefix(u.Status.Message, want) || c == nil || c.Reason != tc.reason {
					return false, fmt.Errorf("phase %q, message %q, condition %+v; want reason %s, message %q", u.Status.Phase, u.Status.Message, c, tc.reason, want)
				}
				return true, nil
			})
			consistently(t, hold, "the small job stays held back", func(ctx context.Context) error {
				if p, err := phaseOf(ctx, "default", small); err != nil || admitted(p) {
					return fmt.Errorf("small job phase %q (err %w) while the big one waits", p, err)
				}
				return nil
			})
		})
	}
}

// priorityJob is suspendedJob with the job's priority set by annotation.
func priorityJob(name, quota, cpu string, priority int32, runFor time.Duration) *batchv1.Job {
	j := suspendedJob(name, quota, cpu, runFor)
	j.Annotations = map[string]string{schedv1alpha1.PriorityAnnotation: fmt.Sprint(priority)}
	return j
}
