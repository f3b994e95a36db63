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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// usageLog records what a cache tells the usage plugins.
type usageLog struct{ calls []usageCall }

func (l *usageLog) set(key schedtypes.UnitKey, h *schedtypes.Holding) {
	c := usageCall{key: key}
	if h != nil {
		cp := *h
		c.h = &cp
	}
	l.calls = append(l.calls, c)
}

func (l *usageLog) last(t *testing.T) usageCall {
	t.Helper()
	if len(l.calls) == 0 {
		t.Fatal("the usage plugins were told nothing")
	}
	return l.calls[len(l.calls)-1]
}

func newTestCache() (*unitCache, *usageLog) {
	l := &usageLog{}
	return newUnitCache(newQueueRegistry(), l.set, func(k schedtypes.UnitKey) { l.set(k, nil) }), l
}

// holder is a unit of quota team-a in phase, admitted as 3 workers of 2 CPUs
// of which 1 finished: it holds 4 CPUs while its phase holds quota.
func holder(name string, phase schedv1alpha1.QueueUnitPhase) *schedv1alpha1.QueueUnit {
	u := makeUnit(name, "team-a", "6").Priority(5).Obj()
	u.Status.Phase = phase
	u.Status.Quota = "team-a"
	u.Status.Admissions = []schedv1alpha1.Admission{{Name: "worker", Replicas: 3,
		Resources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}
	u.Status.ReclaimablePods = []schedv1alpha1.ReclaimablePod{{Name: "worker", Count: 1}}
	return u
}

func TestCacheObserveChargesWhatTheObjectHolds(t *testing.T) {
	for _, tc := range []struct {
		phase schedv1alpha1.QueueUnitPhase
		// want is the CPU charged, in milli-cores; 0: nothing.
		want int64
	}{
		{schedv1alpha1.QueueUnitPhaseReserved, 4000},
		{schedv1alpha1.QueueUnitPhaseDequeued, 4000},
		{schedv1alpha1.QueueUnitPhaseRunning, 4000},
		{schedv1alpha1.QueueUnitPhaseNone, 0},
		{schedv1alpha1.QueueUnitPhaseEnqueued, 0},
		{schedv1alpha1.QueueUnitPhaseTimeoutBackoff, 0},
		{schedv1alpha1.QueueUnitPhaseSucceed, 0},
		{schedv1alpha1.QueueUnitPhaseFailed, 0},
	} {
		t.Run(string(tc.phase), func(t *testing.T) {
			c, log := newTestCache()
			o := c.observe("ns/a", holder("a", tc.phase), "team-a", "team-a")
			got := log.last(t)
			if tc.want == 0 {
				if got.h != nil {
					t.Fatalf("charged %+v, want nothing in phase %s", got.h, tc.phase)
				}
				return
			}
			want := &schedtypes.Holding{Key: "ns/a", Quota: "team-a", Priority: 5, Used: schedtypes.Resources{"cpu": tc.want}}
			if diff := cmp.Diff(want, got.h); diff != "" {
				t.Fatalf("charge (-want +got):\n%s", diff)
			}
			if o.quota != "team-a" || o.relabelled != "" || o.kind == changeInFlight {
				t.Errorf("observation = %+v", o)
			}
		})
	}
}

// A unit being deleted keeps its charge until it is gone (docs/protocol.md,
// Deletion), and a unit told to give its quota back says so to victim
// selection.
func TestCacheObserveKeepsTheChargeOfADeletedOrEvictedHolder(t *testing.T) {
	c, log := newTestCache()
	u := holder("a", schedv1alpha1.QueueUnitPhaseRunning)
	now := metav1.NewTime(testStart)
	u.DeletionTimestamp = &now
	c.observe("ns/a", u, "team-a", "team-a")
	if got := log.last(t); got.h == nil || got.h.Used["cpu"] != 4000 {
		t.Fatalf("a unit being deleted was charged %+v, want its 4 CPUs", got.h)
	}

	v := holder("v", schedv1alpha1.QueueUnitPhaseRunning)
	queueunit.SetCondition(v, schedv1alpha1.ConditionEvicted, metav1.ConditionTrue, schedv1alpha1.ReasonPreempted, "x", now)
	c.observe("ns/v", v, "team-a", "team-a")
	if got := log.last(t); got.h == nil || !got.h.Evicting {
		t.Fatalf("an evicted holder was charged %+v, want it marked evicting", got.h)
	}
}

func TestCacheObservePriorityIsBoundedByTheQueueCeiling(t *testing.T) {
	c, log := newTestCache()
	c.queues.set(&schedv1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, ptr.To[int32](3))
	c.observe("ns/a", holder("a", schedv1alpha1.QueueUnitPhaseRunning), "team-a", "team-a")
	if got := log.last(t); got.h == nil || got.h.Priority != 3 {
		t.Fatalf("charged %+v, want priority 5 bounded to the ceiling 3", got.h)
	}
}

// A holder whose labels name another quota stays charged to the quota of its
// admission (status.quota); the change is reported once, and applies when
// the unit waits again.
func TestCacheRelabelledHolderStaysChargedAndIsReportedOnce(t *testing.T) {
	c, log := newTestCache()
	u := holder("a", schedv1alpha1.QueueUnitPhaseRunning)
	c.observe("ns/a", u, "team-a", "team-a")

	moved := u.DeepCopy()
	moved.Labels[schedv1alpha1.QuotaNameLabel] = "team-b"
	o := c.observe("ns/a", moved, "team-b", "team-b")
	if o.quota != "team-a" || o.relabelled != "team-b" {
		t.Fatalf("observation quota=%q relabelled=%q, want charged to team-a and team-b reported", o.quota, o.relabelled)
	}
	if got := log.last(t); got.h == nil || got.h.Quota != "team-a" {
		t.Fatalf("charged %+v, want team-a still", got.h)
	}
	again := c.observe("ns/a", moved.DeepCopy(), "team-b", "team-b")
	if again.relabelled != "" || again.quota != "team-a" {
		t.Fatalf("second observation = %+v, want no second report", again)
	}
	// Another label change is news again.
	third := moved.DeepCopy()
	third.Labels[schedv1alpha1.QuotaNameLabel] = "team-c"
	if o := c.observe("ns/a", third, "team-c", "team-c"); o.relabelled != "team-c" {
		t.Fatalf("a move to team-c was not reported: %+v", o)
	}

	// Back in the queue, the unit belongs to the quota its labels name.
	back := third.DeepCopy()
	back.Status = schedv1alpha1.QueueUnitStatus{Phase: schedv1alpha1.QueueUnitPhaseEnqueued}
	if o := c.observe("ns/a", back, "team-c", "team-c"); o.quota != "team-c" || o.relabelled != "" {
		t.Fatalf("a waiting unit was kept on its old quota: %+v", o)
	}
	if got := log.last(t); got.h != nil {
		t.Fatalf("a waiting unit is charged %+v", got.h)
	}
}

// A holder admitted before status.quota existed stays on the quota the
// scheduler charged it to.
func TestCacheHolderWithoutStatusQuotaKeepsTheChargedQuota(t *testing.T) {
	c, _ := newTestCache()
	u := holder("a", schedv1alpha1.QueueUnitPhaseRunning)
	u.Status.Quota = ""
	c.observe("ns/a", u, "team-a", "team-a")
	moved := u.DeepCopy()
	moved.Labels[schedv1alpha1.QuotaNameLabel] = "team-b"
	if o := c.observe("ns/a", moved, "team-b", "team-b"); o.quota != "team-a" || o.relabelled != "team-b" {
		t.Fatalf("observation = %+v, want kept on team-a", o)
	}
}

// While an admission is being written, the object the informer brings
// (still pending) does not change the charge: the write decides.
func TestCacheInflightUnitIsNotRecharged(t *testing.T) {
	c, log := newTestCache()
	u := makeUnit("a", "team-a", "2").Phase(schedv1alpha1.QueueUnitPhaseEnqueued).Obj()
	c.observe("ns/a", u, "team-a", "team-a")
	c.update("ns/a", func(st *unitState) { st.inflight = true })
	calls := len(log.calls)

	o := c.observe("ns/a", u.DeepCopy(), "team-a", "team-a")
	if o.kind != changeInFlight {
		t.Fatal("observation of a unit being admitted does not say so")
	}
	if len(log.calls) != calls {
		t.Fatalf("the usage plugins were told %+v while the admission is in flight", log.calls[calls:])
	}
	// It is not a victim candidate either.
	if c.candidateLocked("ns/a") {
		t.Fatal("a unit whose admission is being written is a victim candidate")
	}
}

func TestCacheRemoveForgetsUsageUnlessInFlight(t *testing.T) {
	c, log := newTestCache()
	c.observe("ns/a", holder("a", schedv1alpha1.QueueUnitPhaseRunning), "team-a", "team-a")
	c.remove("ns/a")
	if got := log.last(t); got.key != "ns/a" || got.h != nil {
		t.Fatalf("last usage = %+v, want ns/a's charge forgotten", got)
	}
	if u, _ := c.object("ns/a"); u != nil {
		t.Fatal("a removed unit is still known")
	}

	c.observe("ns/b", makeUnit("b", "team-a", "2").Phase(schedv1alpha1.QueueUnitPhaseEnqueued).Obj(), "team-a", "team-a")
	var st *unitState
	c.update("ns/b", func(s *unitState) { s.inflight, st = true, s })
	calls := len(log.calls)
	c.remove("ns/b")
	if len(log.calls) != calls {
		t.Fatalf("removing a unit being admitted told the plugins %+v; its failed write gives the quota back", log.calls[calls:])
	}
	if !st.deleted {
		t.Fatal("the state of a removed unit is not marked deleted")
	}
	// The write then fails (NotFound) and finds nothing to retry.
	if st, latest, retry := c.admissionDone("ns/b", nil, false); st != nil || latest != nil || retry != nil {
		t.Fatalf("admissionDone of a removed unit = %v %v %v", st, latest, retry)
	}
}

func TestCacheDecideRefusesStaleEntries(t *testing.T) {
	now := metav1.NewTime(testStart)
	pending := func() *unitState {
		return &unitState{obj: makeUnit("a", "team-a", "1").Phase(schedv1alpha1.QueueUnitPhaseEnqueued).Obj()}
	}
	for name, entry := range map[string]any{
		"nil":      nil,
		"not ours": "ns/a",
		"deleted":  func() any { st := pending(); st.deleted = true; return st }(),
		"inflight": func() any { st := pending(); st.inflight = true; return st }(),
		"admitted": func() any {
			st := pending()
			st.obj.Status.Phase = schedv1alpha1.QueueUnitPhaseDequeued
			return st
		}(),
		"being deleted": func() any { st := pending(); st.obj.DeletionTimestamp = &now; return st }(),
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := newTestCache()
			ran := false
			f := c.decide(entry, func(*unitState) *schedtypes.Failure { ran = true; return nil })
			if ran {
				t.Fatal("a stale entry was decided")
			}
			if f == nil || !f.Stale || !f.HeldBack {
				t.Fatalf("failure = %+v, want a held-back stale entry", f)
			}
		})
	}
	t.Run("pending", func(t *testing.T) {
		c, _ := newTestCache()
		want := &schedtypes.Failure{Reason: shortTeamA}
		st := pending()
		if got := c.decide(st, func(*unitState) *schedtypes.Failure { return want }); got != want {
			t.Fatalf("decide = %+v, want the decision's own answer", got)
		}
		if st.inflight {
			t.Fatal("a refused unit was assumed")
		}
	})
	t.Run("admitted", func(t *testing.T) {
		c, _ := newTestCache()
		st := pending()
		if got := c.decide(st, func(*unitState) *schedtypes.Failure { return nil }); got != nil {
			t.Fatalf("decide = %+v, want the admission", got)
		}
		if !st.inflight {
			t.Fatal("an admitted unit was not assumed: a pass could decide it again while its write is in flight")
		}
		if f := c.decide(st, func(*unitState) *schedtypes.Failure { return nil }); f == nil || !f.Stale {
			t.Fatalf("deciding an assumed unit again = %+v, want stale", f)
		}
	})
}

func TestCacheAdmissionDoneWritten(t *testing.T) {
	c, log := newTestCache()
	u := makeUnit("a", "team-a", "2").Phase(schedv1alpha1.QueueUnitPhaseEnqueued).Obj()
	c.observe("ns/a", u, "team-a", "team-a")
	c.update("ns/a", func(st *unitState) {
		st.inflight, st.report.reason, st.report.wanted = true, shortTeamA, &schedtypes.Failure{Reason: shortTeamA}
	})
	calls := len(log.calls)
	written := u.DeepCopy()
	written.Status.Phase = schedv1alpha1.QueueUnitPhaseDequeued

	st, latest, retry := c.admissionDone("ns/a", written, true)
	if st == nil || retry != nil {
		t.Fatalf("admissionDone = %v, retry %v", st, retry)
	}
	if latest != written {
		t.Fatal("the written object is not the one to replay while the informer has not brought it")
	}
	if st.inflight || !st.holding || st.report.reason != (schedtypes.Reason{}) || st.report.wanted != nil {
		t.Fatalf("state after admission = inflight %v holding %v reason %v wanted %v", st.inflight, st.holding, st.report.reason, st.report.wanted)
	}
	if len(log.calls) != calls {
		t.Fatal("the cache re-charged on admission: the reserve already did, and the replay will")
	}

	// The informer was faster: its newer object is kept and replayed.
	c.update("ns/a", func(st *unitState) { st.inflight = true })
	newer := written.DeepCopy()
	newer.Status.Phase = schedv1alpha1.QueueUnitPhaseRunning
	c.update("ns/a", func(st *unitState) { st.obj = newer })
	if _, latest, _ := c.admissionDone("ns/a", written, true); latest != newer {
		t.Fatalf("replayed %v, want the newer object the informer brought", latest.Status.Phase)
	}
}

func TestCacheAdmissionDoneFailedGivesTheQuotaBack(t *testing.T) {
	c, log := newTestCache()
	u := makeUnit("a", "team-a", "2").Phase(schedv1alpha1.QueueUnitPhaseEnqueued).Obj()
	c.observe("ns/a", u, "team-a", "team-a")
	c.update("ns/a", func(st *unitState) { st.inflight = true })

	st, latest, retry := c.admissionDone("ns/a", nil, false)
	if st == nil || st.inflight || latest != nil {
		t.Fatalf("admissionDone = %v latest %v", st, latest)
	}
	if retry != u {
		t.Fatal("a pending unit whose admission failed is not decided again")
	}
	if got := log.last(t); got.key != "ns/a" || got.h != nil {
		t.Fatalf("usage after a failed admission = %+v, want nothing held", got)
	}

	// A unit that no longer waits (the extension moved it meanwhile) is not
	// retried, and is charged what its object says.
	c.update("ns/a", func(st *unitState) { st.inflight, st.obj = true, holder("a", schedv1alpha1.QueueUnitPhaseRunning) })
	if _, _, retry := c.admissionDone("ns/a", nil, false); retry != nil {
		t.Fatal("a running unit was queued again")
	}
	if got := log.last(t); got.h == nil || got.h.Used["cpu"] != 4000 {
		t.Fatalf("usage = %+v, want what the running object holds", got.h)
	}
}

// A unit chosen as a victim is marked evicting at once, so it is not chosen
// again before its eviction is in the API; giving its quota back ends that.
func TestCacheEvictingUntilTheQuotaIsBack(t *testing.T) {
	c, log := newTestCache()
	c.observe("ns/v", holder("v", schedv1alpha1.QueueUnitPhaseRunning), "team-a", "team-a")
	h := *log.last(t).h
	if obj := c.evictingLocked(h); obj == nil || obj.Name != "v" {
		t.Fatalf("evictingLocked = %v, want the victim's object", obj)
	}
	c.update("ns/v", func(st *unitState) {
		if !st.evicting {
			t.Error("the victim is not marked evicting")
		}
	})
	if got := log.last(t); got.h == nil || !got.h.Evicting {
		t.Fatalf("usage = %+v, want the victim evicting", got.h)
	}
	// The informer brings the old object again: still evicting.
	c.observe("ns/v", holder("v", schedv1alpha1.QueueUnitPhaseRunning), "team-a", "team-a")
	if got := log.last(t); got.h == nil || !got.h.Evicting {
		t.Fatalf("usage after a stale update = %+v, want still evicting", got.h)
	}
	back := holder("v", schedv1alpha1.QueueUnitPhaseEnqueued)
	back.Status.Admissions = nil
	c.observe("ns/v", back, "team-a", "team-a")
	c.update("ns/v", func(st *unitState) {
		if st.evicting {
			t.Error("a unit that gave its quota back is still evicting")
		}
	})
	if c.evictingLocked(schedtypes.Holding{Key: "ns/gone"}) != nil {
		t.Fatal("an unknown victim was marked")
	}
}

func TestCachePendingListsWaitingUnitsNotBeingAdmitted(t *testing.T) {
	c, _ := newTestCache()
	c.observe("ns/a", makeUnit("a", "team-a", "1").Phase(schedv1alpha1.QueueUnitPhaseEnqueued).Obj(), "team-a", "team-a")
	c.observe("ns/b", makeUnit("b", "team-a", "1").Obj(), "team-a", "team-a")
	c.observe("ns/c", makeUnit("c", "team-b", "1").Phase(schedv1alpha1.QueueUnitPhaseEnqueued).Obj(), "team-b", "team-b")
	c.observe("ns/d", holder("d", schedv1alpha1.QueueUnitPhaseRunning), "team-a", "team-a")
	c.observe("ns/e", makeUnit("e", "team-a", "1").Phase(schedv1alpha1.QueueUnitPhaseEnqueued).Obj(), "team-a", "team-a")
	c.update("ns/e", func(st *unitState) { st.inflight = true })

	keys := func(ps []pendingEntry) map[schedtypes.UnitKey]bool {
		out := map[schedtypes.UnitKey]bool{}
		for _, p := range ps {
			out[keyOf(p.obj)] = true
		}
		return out
	}
	if diff := cmp.Diff(map[schedtypes.UnitKey]bool{"ns/a": true, "ns/b": true}, keys(c.pending("team-a"))); diff != "" {
		t.Errorf("pending of team-a (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[schedtypes.UnitKey]bool{"ns/a": true, "ns/b": true, "ns/c": true}, keys(c.pending(""))); diff != "" {
		t.Errorf("pending of every queue (-want +got):\n%s", diff)
	}
}

var shortTeamA = schedtypes.Reason{Kind: schedtypes.WaitInsufficientQuota, Subject: "team-a", Detail: "cpu"}

// updateOf with a state at hand changes that state while its unit is
// there, and never the state of a unit of the same name made after it.
func TestCacheUpdateOfSkipsADeletedState(t *testing.T) {
	c, _ := newTestCache()
	old := c.observe("ns/a", holder("a", schedv1alpha1.QueueUnitPhaseEnqueued), "team-a", "team-a").st
	mark := func(st *unitState) { st.refusals++ }
	if !c.updateOf("ns/a", old, mark) || old.refusals != 1 {
		t.Fatalf("update of a present state: ran %d times", old.refusals)
	}
	c.remove("ns/a")
	again := c.observe("ns/a", holder("a", schedv1alpha1.QueueUnitPhaseEnqueued), "team-a", "team-a").st
	if again == old {
		t.Fatal("a unit made again kept the deleted one's state")
	}
	if c.updateOf("ns/a", old, mark) || old.refusals != 1 || again.refusals != 0 {
		t.Errorf("update of a deleted state ran: deleted %d, new %d", old.refusals, again.refusals)
	}
	if !c.updateOf("ns/a", nil, mark) || again.refusals != 1 {
		t.Errorf("update by key: new state ran %d times", again.refusals)
	}
}
