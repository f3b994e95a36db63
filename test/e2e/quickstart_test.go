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

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// TestQuickStart plays the guide's quick start as written: ElasticQuota team-a
// (4 CPU / 8Gi) and two 4 CPU / 8Gi Jobs. The first is admitted and runs on a
// fake node; the second stays Enqueued, saying why, for as long as the first
// runs; when the first completes the second is dequeued on its own.
func TestQuickStart(t *testing.T) {
	const ns = "default"
	applyGuide(t, "elastic-quota.yaml")
	eventually(t, "Queue koord-queue/team-a auto-created with policy Priority and priority 1000", func(ctx context.Context) (bool, error) {
		q := &schedv1alpha1.Queue{}
		if err := get(ctx, "koord-queue", "team-a", q); err != nil {
			return false, err
		}
		if q.Spec.QueuePolicy != "Priority" || q.Spec.Priority == nil || *q.Spec.Priority != 1000 {
			return false, fmt.Errorf("spec %+v", q.Spec)
		}
		return true, nil
	})

	applyGuide(t, "jobs.yaml")
	waitPhase(t, ns, "my-job", "dequeued", admitted)
	waitJobReleased(t, ns, "my-job")
	runningPodOnFakeNode(t, ns, "my-job")
	checkKoordinatorBook(t, ns, "my-job", "team-a", "4")

	// While my-job runs, my-job-blocked waits in Enqueued, suspended, and its
	// status says why.
	blockedSeen, messageSeen := false, ""
	eventually(t, "my-job to complete while my-job-blocked waits", func(ctx context.Context) (bool, error) {
		done, err := jobComplete(ctx, ns, "my-job")
		if err != nil || done {
			return done, err
		}
		qu, err := queueUnit(ctx, ns, "my-job-blocked")
		if err != nil {
			return false, err
		}
		suspended, err := jobSuspended(ctx, ns, "my-job-blocked")
		if err != nil {
			return false, err
		}
		if qu.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued && qu.Status.Phase != "" || !suspended {
			t.Fatalf("my-job-blocked was let through while my-job runs: phase %q, suspended %v", qu.Status.Phase, suspended)
		}
		if qu.Status.Phase == schedv1alpha1.QueueUnitPhaseEnqueued {
			blockedSeen = true
		}
		if qu.Status.Message != "" {
			messageSeen = qu.Status.Message
		}
		return false, nil
	})
	if !blockedSeen {
		t.Errorf("my-job-blocked never showed phase Enqueued while my-job ran")
	}
	if messageSeen == "" {
		t.Errorf("my-job-blocked's status.message never said why it waits")
	} else {
		t.Logf("my-job-blocked waited with message %q", messageSeen)
	}

	// The guide's table: kubectl get queueunit shows these columns.
	out := kubectl(t, "get", "queueunit", "my-job-blocked", "-n", ns)
	t.Logf("kubectl get queueunit my-job-blocked -n default\n%s", out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if got := strings.Join(strings.Fields(lines[0]), " "); got != "NAME PHASE PRIORITY ADMISSIONS JOBTYPE" {
		t.Errorf("kubectl get queueunit columns = %q, want NAME PHASE PRIORITY ADMISSIONS JOBTYPE", got)
	}
	if len(lines) < 2 || !strings.HasPrefix(lines[1], "my-job-blocked") || !strings.HasSuffix(strings.TrimSpace(lines[1]), "Job") {
		t.Errorf("kubectl get queueunit row = %q, want my-job-blocked ... Job", lines[1:])
	}

	// my-job finished and gave team-a back: my-job-blocked goes on its own.
	waitPhase(t, ns, "my-job-blocked", "dequeued", admitted)
	waitJobReleased(t, ns, "my-job-blocked")
	runningPodOnFakeNode(t, ns, "my-job-blocked")
	waitPhase(t, ns, "my-job", "Succeed", isPhase(schedv1alpha1.QueueUnitPhaseSucceed))
	eventually(t, "my-job-blocked to complete", func(ctx context.Context) (bool, error) {
		return jobComplete(ctx, ns, "my-job-blocked")
	})
}
