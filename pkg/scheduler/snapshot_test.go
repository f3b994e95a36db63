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
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	toolscache "k8s.io/client-go/tools/cache"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/metrics"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// The view answers with copies: a caller that changes what it got changes
// nothing in the scheduler.
func TestViewReturnsCopies(t *testing.T) {
	f := newFixture(t, nil)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	f.addQueue(t, utiltesting.MakeQueue("team-b").Priority(2000).Obj())
	f.addUnit(t, makeUnit("a", "team-a", "2").Priority(3).Obj())
	f.addUnit(t, makeUnit("b", "team-a", "1").Priority(5).Obj())
	f.addUnit(t, makeUnit("x", "team-x", "1").Obj())
	v := f.s.View()

	got, ok := v.Pending("team-a")
	if !ok || len(got) != 2 {
		t.Fatalf("pending = %v %v, want the 2 units of team-a", got, ok)
	}
	if got[0].Name != "b" || got[0].Position != 1 || got[1].Name != "a" || got[1].Position != 2 {
		t.Fatalf("order = %s@%d, %s@%d; want b then a (priority first)", got[0].Name, got[0].Position, got[1].Name, got[1].Position)
	}
	if got[1].Quota != "team-a" || got[1].Request["cpu"] != 2000 || !got[1].Created.Equal(testStart.Add(-time.Hour)) {
		t.Fatalf("unit a = %+v", got[1])
	}
	got[1].Request["cpu"] = 1
	got[1].Priority = 100
	again, _ := v.Pending("team-a")
	if again[1].Request["cpu"] != 2000 || again[1].Priority != 3 {
		t.Fatalf("changing the view changed the queue: %+v", again[1])
	}
	if u, _ := f.s.env.queues.Get("ns/a"); u.Request["cpu"] != 2000 {
		t.Fatalf("the queue's own entry now asks %v", u.Request)
	}

	if _, ok := v.Pending("team-x"); ok {
		t.Error("a missing queue has pending units")
	}
	if diff := cmp.Diff([]schedtypes.QueueName{"team-b", "team-a"}, v.QueueNames()); diff != "" {
		t.Errorf("queue names in serving order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[schedtypes.QueueName]int{"team-a": 2, "team-b": 0}, v.PendingCounts()); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	orphans := v.Orphans()
	if diff := cmp.Diff(map[schedtypes.QueueName][]schedtypes.UnitKey{"team-x": {"ns/x"}}, orphans); diff != "" {
		t.Errorf("orphans (-want +got):\n%s", diff)
	}
	orphans["team-x"][0] = "changed"
	if got := f.s.env.queues.Orphans()["team-x"][0]; got != "ns/x" {
		t.Errorf("changing the orphans changed the queues: %q", got)
	}
	if s, ok := v.QueueSettings("team-b"); !ok || s.Priority != 2000 {
		t.Errorf("settings of team-b = %+v %v", s, ok)
	}
	if q, quota := v.Map(makeUnit("y", "team-c", "1").Obj()); q != "team-c" || quota != "team-c" {
		t.Errorf("map = %s %s", q, quota)
	}
	f.plugin.cohorts["team-c"] = "org"
	if c := v.Cohort("team-c"); c != "org" {
		t.Errorf("cohort = %q", c)
	}
}

// The view's quotas are the plugin's, with their usage.
func TestViewQuotas(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 4)
	f.addUnit(t, holder("h", schedv1alpha1.QueueUnitPhaseRunning))
	qs := f.s.View().Quotas()
	if len(qs) != 1 || qs[0].Name != "team-a" || qs[0].Used["cpu"] != 4000 || qs[0].Max["cpu"] != 4000 {
		t.Fatalf("quotas = %+v, want team-a using its 4 CPUs", qs)
	}
}

// The metrics snapshot counts units by namespace and job type, and sums
// what the holders hold per namespace, CPU in cores, memory in bytes.
func TestMetricsSnapshot(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 10)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	h := holder("h", schedv1alpha1.QueueUnitPhaseRunning)
	h.Status.Admissions[0].Resources[corev1.ResourceMemory] = resource.MustParse("1Gi")
	f.addUnit(t, h)
	r := makeUnit("r", "team-a", "1").ConsumerRef("kubeflow.org/v1", "TFJob", "r").Phase(schedv1alpha1.QueueUnitPhaseDequeued).Obj()
	f.addUnit(t, r)
	f.addUnit(t, makeUnit("w", "team-a", "1").Obj())
	other := utiltesting.MakeQueueUnit("o", "other").Quota("team-a").Request("cpu", "500m").Phase(schedv1alpha1.QueueUnitPhaseRunning).Obj()
	f.addUnit(t, other)

	snap := f.s.MetricsSnapshot()
	wantUnits := map[[2]string]int{{"ns", "Job"}: 2, {"ns", "TFJob"}: 1, {"other", "Job"}: 1}
	if diff := cmp.Diff(wantUnits, snap.UnitsByJobType); diff != "" {
		t.Errorf("units by job type (-want +got):\n%s", diff)
	}
	// h holds 2 workers of 2 CPUs and 1 GiB, r its 1 CPU; w holds nothing.
	wantUsage := map[string]map[string]float64{
		"ns":    {"cpu": 5, "memory": 2 * 1024 * 1024 * 1024},
		"other": {"cpu": 0.5},
	}
	if diff := cmp.Diff(wantUsage, snap.UsageByNamespace); diff != "" {
		t.Errorf("usage by namespace (-want +got):\n%s", diff)
	}
	wantQuotas := []metrics.QuotaState{{Name: "team-a", Max: map[string]float64{"cpu": 10}, Min: map[string]float64{},
		Used: map[string]float64{"cpu": 5.5, "memory": 2 * 1024 * 1024 * 1024}}}
	if diff := cmp.Diff(wantQuotas, snap.Quotas); diff != "" {
		t.Errorf("quotas (-want +got):\n%s", diff)
	}
	if len(snap.Queues) != 1 || snap.Queues[0].Name != "team-a" || snap.Queues[0].Active != 1 {
		t.Errorf("queues = %+v, want team-a with its one waiting unit", snap.Queues)
	}
}

// syncedAt is a handler registration that has seen every object once done is true.
type syncedAt struct{ done *bool }

func (r syncedAt) HasSynced() bool                          { return *r.done }
func (r syncedAt) HasSyncedChecker() toolscache.DoneChecker { return nil }

// The view says what is not read yet, by kind, and whether the replica leads.
func TestViewSyncAndLeadership(t *testing.T) {
	f := newFixture(t, nil)
	units, queues := false, true
	f.s.registrations = []toolscache.ResourceEventHandlerRegistration{syncedAt{&units}, syncedAt{&queues}}
	f.s.watched = []string{"QueueUnits", "Queues"}
	v := f.s.View()
	if diff := cmp.Diff([]string{"QueueUnits"}, v.Unsynced()); diff != "" {
		t.Errorf("unsynced before the units are read (-want +got):\n%s", diff)
	}
	units = true
	if got := v.Unsynced(); len(got) != 0 {
		t.Errorf("unsynced once all is read: %v, want none", got)
	}
	if !v.Leading() {
		t.Error("the fixture's leading scheduler says it does not lead")
	}
	f.s.env.leading.Store(false)
	if v.Leading() {
		t.Error("a follower says it leads")
	}
}
