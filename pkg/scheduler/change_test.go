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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// facts is what the parts read of a change, for comparing.
type facts struct {
	Kind                                           changeKind
	Created, Finished, Released, SpecChanged, Seen bool
}

func factsOf(ch unitChange) facts {
	f := facts{Kind: ch.kind, Seen: ch.seen()}
	if ch.kind == changeStale || ch.kind == changeDeleted {
		return f
	}
	f.Created, f.Finished, f.Released, f.SpecChanged = ch.created(), ch.finished(), ch.released(), ch.specChanged()
	return f
}

// One update of the cache yields one typed change; the table walks a unit
// through its life.
func TestCacheYieldsOneChangePerEvent(t *testing.T) {
	c, _ := newTestCache()
	now := metav1.NewTime(testStart)
	at := func(phase schedv1alpha1.QueueUnitPhase, rv string) *schedv1alpha1.QueueUnit {
		u := holder("a", phase)
		if phase == schedv1alpha1.QueueUnitPhaseNone || phase == schedv1alpha1.QueueUnitPhaseEnqueued {
			u.Status.Admissions, u.Status.Quota = nil, ""
		}
		u.UID, u.ResourceVersion, u.Generation = "uid-a", rv, 1
		if rv >= "3" {
			// The spec changed at version 3.
			u.Generation = 2
		}
		return u
	}
	deleting := at(schedv1alpha1.QueueUnitPhaseSucceed, "8")
	deleting.DeletionTimestamp = &now
	for _, step := range []struct {
		name string
		u    *schedv1alpha1.QueueUnit // nil: deleted
		want facts
	}{
		{"created", at(schedv1alpha1.QueueUnitPhaseNone, "1"), facts{Kind: changePending, Seen: true, Created: true, SpecChanged: true}},
		{"enqueued", at(schedv1alpha1.QueueUnitPhaseEnqueued, "2"), facts{Kind: changePending, Seen: true}},
		{"spec changed", at(schedv1alpha1.QueueUnitPhaseEnqueued, "3"), facts{Kind: changePending, Seen: true, SpecChanged: true}},
		{"older version", at(schedv1alpha1.QueueUnitPhaseEnqueued, "1"), facts{Kind: changeStale}},
		{"admitted", at(schedv1alpha1.QueueUnitPhaseDequeued, "4"), facts{Kind: changeAdmitted, Seen: true}},
		{"running", at(schedv1alpha1.QueueUnitPhaseRunning, "5"), facts{Kind: changeAdmitted, Seen: true}},
		{"evicted back to its queue", at(schedv1alpha1.QueueUnitPhaseEnqueued, "6"), facts{Kind: changePending, Seen: true, Released: true}},
		{"finished", at(schedv1alpha1.QueueUnitPhaseSucceed, "7"), facts{Kind: changeAdmitted, Seen: true, Finished: true}},
		{"being deleted", deleting, facts{Kind: changeDeleting, Seen: true}},
		{"deleted", nil, facts{Kind: changeDeleted}},
	} {
		var ch unitChange
		if step.u == nil {
			ch = c.remove("ns/a")
		} else {
			ch = c.observe("ns/a", step.u, "team-a", "team-a")
		}
		if ch.key != "ns/a" {
			t.Errorf("%s: change of %q", step.name, ch.key)
		}
		if diff := cmp.Diff(step.want, factsOf(ch)); diff != "" {
			t.Errorf("%s: change (-want +got):\n%s", step.name, diff)
		}
	}
}

// An update that comes while the unit's admission is being written is
// recorded, and the parts leave it to that write's outcome.
func TestCacheChangeInFlight(t *testing.T) {
	c, _ := newTestCache()
	u := makeUnit("a", "team-a", "1").Phase(schedv1alpha1.QueueUnitPhaseEnqueued).Obj()
	c.observe("ns/a", u, "team-a", "team-a")
	c.update("ns/a", func(st *unitState) { st.inflight = true })
	newer := u.DeepCopy()
	newer.Generation = 3
	ch := c.observe("ns/a", newer, "team-a", "team-a")
	if ch.kind != changeInFlight || ch.seen() || ch.created() || ch.new != newer || ch.old != u {
		t.Fatalf("change = kind %v seen %v old %p new %p, want in flight with both objects", ch.kind, ch.seen(), ch.old, ch.new)
	}
}

type followLog struct {
	name string
	got  *[]string
}

func (f followLog) unitChanged(ch unitChange) { *f.got = append(*f.got, f.name+":"+string(ch.key)) }

// Every follower sees each change once, in order, the queues last; a stale
// version reaches none.
func TestIntakeHandsEachChangeToEveryFollowerInOrder(t *testing.T) {
	f := newFixture(t, nil)
	var got []string
	in := newIntake(f.s.env, f.s.cache, f.s.registry, f.s.reports, followLog{"first", &got}, followLog{"second", &got})
	if n := len(in.followers); n != 3 || in.followers[2] != unitFollower(in) {
		t.Fatalf("followers = %d, want the two given and the intake last", n)
	}
	in.followers[2] = followLog{"queues", &got}
	u := makeUnit("a", "team-a", "1").Phase(schedv1alpha1.QueueUnitPhaseEnqueued).Obj()
	u.UID, u.ResourceVersion = "uid-a", "5"
	in.onUnit(u)
	stale := u.DeepCopy()
	stale.ResourceVersion = "4"
	in.onUnit(stale)
	in.onUnitDelete(u)
	want := []string{"first:ns/a", "second:ns/a", "queues:ns/a", "first:ns/a", "second:ns/a", "queues:ns/a"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("changes seen (-want +got):\n%s", diff)
	}
}
