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

package jobext

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/job"
)

// TestBackstopHoldsStartedJob: a Job with the quota label that started
// unsuspended before koord-queue-controllers ran (created before the install,
// or while the webhook was down) is suspended and queued once the
// controllers see it, and stays suspended while its unit waits.
func TestBackstopHoldsStartedJob(t *testing.T) {
	c := k8s(t)
	ctx := context.Background()
	early := createNamespace(t, c, nil)
	if err := c.Create(ctx, batchJob(early, "early", false, quotaLabels())); err != nil {
		t.Fatal(err)
	}
	setJobStatus(t, c, early, "early", func(j *batchv1.Job) {
		now := metav1.Now()
		j.Status.StartTime = &now
		j.Status.Active, j.Status.Ready = 2, ptr.To[int32](2)
	})
	if ptr.Deref(getJob(t, c, early, "early").Spec.Suspend, false) {
		t.Fatal("job suspended before the controllers ran")
	}
	startManager(t, []string{job.Name}, func(o *appOptions) { o.WatchNamespaces = append(o.WatchNamespaces, early) })
	waitJobSuspend(t, c, early, "early", true)
	u := waitUnit(t, c, early, "early", "queue unit of the started job", anyUnit)
	if admitted := u.Status.Phase == schedv1alpha1.QueueUnitPhaseDequeued || u.Status.Phase == schedv1alpha1.QueueUnitPhaseRunning; admitted {
		t.Errorf("unit of the held job is %s", u.Status.Phase)
	}
}

// TestBackstopResuspends: a waiting job that someone unsuspends is suspended
// again while its unit is not admitted.
func TestBackstopResuspends(t *testing.T) {
	c, ns := startManager(t, []string{job.Name}, nil)
	ctx := context.Background()
	if err := c.Create(ctx, batchJob(ns, "j", true, quotaLabels())); err != nil {
		t.Fatal(err)
	}
	waitUnit(t, c, ns, "j", "queue unit", anyUnit)
	enqueue(t, c, ns, "j")
	eventually(t, "job unsuspended by hand", func(ctx context.Context) (bool, error) {
		j := &batchv1.Job{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "j"}, j); err != nil {
			return false, err
		}
		j.Spec.Suspend = ptr.To(false)
		return true, c.Update(ctx, j)
	})
	waitJobSuspend(t, c, ns, "j", true)
}
