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
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	toolscache "k8s.io/client-go/tools/cache"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/metrics"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// A unit whose queue is missing counts as a queue_not_found attempt of that
// queue once each time it is found so, not at every resync of the unit.
func TestAttemptsCountQueueNotFound(t *testing.T) {
	rec := metrics.NewRecorder()
	f := newFixture(t, func(o *Options) { o.Metrics = rec })
	attempts := func(queue string) float64 {
		return testutil.ToFloat64(rec.Attempts.WithLabelValues(queue, "queue_not_found"))
	}

	// A unit naming a quota without a Queue.
	f.addUnit(t, makeUnit("lost", "team-b", "1").Obj())
	f.step(t, waitingWriteDelay, f.informDue)
	f.sync(t)
	f.feed(t, "lost")
	if got := attempts("team-b"); got != 1 {
		t.Errorf("team-b queue_not_found attempts = %v, want 1", got)
	}

	// A deleted Queue's pending unit.
	f.plugin.setCapacity("team-a", 1)
	q := f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	f.addUnit(t, makeUnit("a", "team-a", "2").Phase(schedv1alpha1.QueueUnitPhaseEnqueued).Obj())
	if got := attempts("team-a"); got != 0 {
		t.Errorf("team-a queue_not_found attempts = %v before its Queue is deleted, want 0", got)
	}
	f.s.queueSync.onQueueDelete(toolscache.DeletedFinalStateUnknown{Key: "koord-queue/team-a", Obj: q})
	f.step(t, waitingWriteDelay, f.informDue)
	f.feed(t, "a")
	if got := attempts("team-a"); got != 1 {
		t.Errorf("team-a queue_not_found attempts = %v, want 1", got)
	}
}

// The leader counts each waiting unit under the reason its status gives (or
// will give once written); a follower counts nothing.
func TestMetricsSnapshotCountsWaitReasons(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 2)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	f.addUnit(t, makeUnit("a", "team-a", "2").Obj())
	f.addUnit(t, makeUnit("b", "team-a", "1").Obj())
	f.pass(t)
	f.addUnit(t, makeUnit("huge", "team-a", "8").Obj())
	f.pass(t)
	f.addUnit(t, makeUnit("new", "team-a", "1").Obj())
	f.addUnit(t, makeUnit("lost", "team-b", "1").Obj())
	f.addUnit(t, makeUnit("backoff", "team-a", "1").Phase(schedv1alpha1.QueueUnitPhaseTimeoutBackoff).Obj())

	want := map[metrics.WaitKey]int{
		{Queue: "team-a", Quota: "team-a", Reason: "InsufficientQuota"}:          1,
		{Queue: "team-a", Quota: "team-a", Reason: "NeverFits"}:                  1,
		{Queue: "team-a", Quota: "team-a", Reason: metrics.ReasonNotTried}:       1,
		{Queue: "team-a", Quota: "team-a", Reason: metrics.ReasonTimeoutBackoff}: 1,
		{Queue: "team-b", Quota: "team-b", Reason: "QueueNotFound"}:              1,
	}
	if diff := cmp.Diff(want, f.s.MetricsSnapshot().Waiting); diff != "" {
		t.Errorf("waiting units (-want +got):\n%s", diff)
	}

	// Room for b and new: they leave the count once admitted.
	f.plugin.setCapacity("team-a", 4)
	f.s.env.queues.Invalidate()
	f.pass(t)
	want = map[metrics.WaitKey]int{
		{Queue: "team-a", Quota: "team-a", Reason: "NeverFits"}:                  1,
		{Queue: "team-a", Quota: "team-a", Reason: metrics.ReasonTimeoutBackoff}: 1,
		{Queue: "team-b", Quota: "team-b", Reason: "QueueNotFound"}:              1,
	}
	if diff := cmp.Diff(want, f.s.MetricsSnapshot().Waiting); diff != "" {
		t.Errorf("waiting units after room was made (-want +got):\n%s", diff)
	}

	f.s.env.leading.Store(false)
	if diff := cmp.Diff(metrics.Snapshot{}, f.s.MetricsSnapshot()); diff != "" {
		t.Errorf("a follower's snapshot (-want +got):\n%s", diff)
	}
}

// Units that come and finish are counted by the leader only, so the
// replicas' sum counts each once.
func TestArrivalsAreCountedByTheLeader(t *testing.T) {
	rec := metrics.NewRecorder()
	f := newFixture(t, func(o *Options) { o.Metrics = rec })
	created := func() float64 {
		return testutil.ToFloat64(rec.ComingRate.WithLabelValues("ns", "Job", metrics.StatusCreated))
	}
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	f.addUnit(t, makeUnit("a", "team-a", "1").ConsumerRef("batch/v1", "Job", "a").Obj())
	if got := created(); got != 1 {
		t.Errorf("created on the leader = %v, want 1", got)
	}
	f.s.env.leading.Store(false)
	f.addUnit(t, makeUnit("b", "team-a", "1").ConsumerRef("batch/v1", "Job", "b").Obj())
	if got := created(); got != 1 {
		t.Errorf("created after a follower saw another unit = %v, want 1", got)
	}
}
