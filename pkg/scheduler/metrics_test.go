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
