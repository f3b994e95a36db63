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

package queue

import (
	"fmt"
	"strings"
	"testing"
	"time"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// heldWorld decides units the way the scheduler does, on a real quota tree:
// a unit that does not fit says whether it could once the running units of
// lower priority finish (Reserves); one that fits on its own must also fit
// beside the room held for units above it (Pending.Beside).
type heldWorld struct {
	m       *Manager
	tree    *quota.Tree
	now     time.Time
	running map[schedtypes.UnitKey]running
	// when holds when each unit was admitted.
	when map[string]time.Time
}

type running struct {
	h   schedtypes.Holding
	end time.Time
}

func newHeldWorld(t *testing.T, quotas ...quota.Spec) *heldWorld {
	t.Helper()
	w := &heldWorld{tree: quota.New(1), now: t0, running: map[schedtypes.UnitKey]running{}, when: map[string]time.Time{}}
	w.m = NewManager(nil, WithClock(func() time.Time { return w.now }))
	for _, q := range quotas {
		if err := w.tree.Upsert(q); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w *heldWorld) try(u *schedtypes.Unit, _ Settings) *schedtypes.Failure {
	if s := w.tree.Check(u.Quota, u.Request); s != nil {
		held := map[schedtypes.QuotaName][]schedtypes.Holding{}
		for _, r := range w.running {
			held[r.h.Quota] = append(held[r.h.Quota], r.h)
		}
		lower := func(h schedtypes.Holding) bool { return h.Priority < u.Priority }
		return &schedtypes.Failure{Reason: s.Reason(), Message: s.Message(), NeverFits: s.NeverFits, Reserves: quota.NewHeldRoom(w.tree).CouldFit(u.Quota, u.Request, held, lower)}
	}
	if s := quota.NewHeldRoom(w.tree).Check(u.Quota, u.Request, u.Pending.Beside); s != nil {
		return &schedtypes.Failure{Reason: s.Reason(), Message: s.Message(), Reserves: true}
	}
	w.tree.Charge(u.Quota, u.Request)
	return nil
}

// add queues a unit created now.
func (w *heldWorld) add(queueName schedtypes.QueueName, name string, quotaName schedtypes.QuotaName, prio int32, cpus int64) {
	w.m.Upsert(&schedtypes.Unit{Key: schedtypes.UnitKey("ns/" + name), Namespace: "ns", Name: name, Priority: prio, Created: w.now,
		Quota: quotaName, Cohort: w.tree.Cohort(quotaName), Request: cpu(cpus), WaitingSince: w.now}, queueName, true)
}

// pass runs a pass; what it admits runs for runFor.
func (w *heldWorld) pass(runFor time.Duration) *PassResult {
	res := w.m.Pass(w.try)
	for _, a := range res.Admitted {
		u := a.Unit
		w.running[u.Key] = running{h: schedtypes.Holding{Key: u.Key, Quota: u.Quota, Used: u.Request, Priority: u.Priority}, end: w.now.Add(runFor)}
		w.when[u.Name] = w.now
	}
	return &res
}

// tick moves time by d and ends the units due, giving their quota back.
func (w *heldWorld) tick(d time.Duration) {
	w.now = w.now.Add(d)
	for key, r := range w.running {
		if !w.now.Before(r.end) {
			delete(w.running, key)
			w.tree.Release(r.h.Quota, r.h.Used)
			w.m.Freed(w.tree.Cohort(r.h.Quota))
		}
	}
}

// cohortOfTwo is a parent quota p of 24 CPU over children a and b that may
// each use all of it, with a Priority queue per child that holds room.
func cohortOfTwo(t *testing.T) *heldWorld {
	w := newHeldWorld(t, quota.Spec{Name: "p", Max: cpu(24)},
		quota.Spec{Name: "a", Parent: "p", Max: cpu(24)}, quota.Spec{Name: "b", Parent: "p", Max: cpu(24)})
	for _, q := range []schedtypes.QueueName{"a", "b"} {
		w.m.UpsertQueue(Settings{Name: q, Policy: schedv1alpha1.QueuePolicyPriority, HoldRoom: true})
	}
	return w
}

// smallStream feeds both queues of cohortOfTwo three 1-CPU units of
// priority 50 a second, each running 10 s (30 CPU asked of 24: a backlog
// always), and puts a unit of bigCPU CPU and priority 200 in queue a after
// 20 s. It returns the world after horizon.
func smallStream(t *testing.T, bigCPU int64, horizon time.Duration) *heldWorld {
	w := cohortOfTwo(t)
	const smallRun = 10 * time.Second
	for i := 0; w.now.Sub(t0) < horizon; i++ {
		for j, q := range []schedtypes.QueueName{"a", "b", "a"} {
			w.add(q, fmt.Sprintf("small-%d-%d", i, j), schedtypes.QuotaName(q), 50, 1)
		}
		if i == 20 {
			w.add("a", "big", "a", 200, bigCPU)
		}
		w.pass(smallRun)
		w.tick(time.Second)
	}
	return w
}

// A unit of high priority that does not fit yet is admitted before the
// small units of lower priority queued after it, in its own queue and in the
// other queue of its cohort, once enough of the running ones finish; then
// the small ones flow again.
func TestHeldRoomAdmitsHighPriorityBeforeLaterSmallUnits(t *testing.T) {
	w := smallStream(t, 20, 3*time.Minute)
	big, ok := w.when["big"]
	if !ok {
		t.Fatalf("the 20-CPU unit of priority 200 was never admitted in 3 minutes of 1-CPU units")
	}
	arrived := t0.Add(20 * time.Second)
	t.Logf("big unit admitted %s after it arrived", big.Sub(arrived))
	// The running small units end within 10 s: the room is free by then.
	if wait := big.Sub(arrived); wait > 11*time.Second {
		t.Errorf("big unit waited %s, want at most the 10 s small units run", wait)
	}
	var overtook, after int
	for name, at := range w.when {
		if !strings.HasPrefix(name, "small-") {
			continue
		}
		var i, j int
		if _, err := fmt.Sscanf(name, "small-%d-%d", &i, &j); err != nil {
			t.Fatal(err)
		}
		if i >= 20 && at.Before(big) {
			overtook++
		}
		if at.After(big) {
			after++
		}
	}
	if overtook > 0 {
		// Units already admitted may finish; none queued after it may start
		// before it unless it fits beside it (it never does: 24 - 20 < 4 in use).
		t.Logf("%d small units queued after the big one were admitted before it (fitting beside it)", overtook)
	}
	if after == 0 {
		t.Fatalf("no small unit was admitted after the big one: the room is still held")
	}
	if held := w.m.Held(); len(held["p"]) != 0 {
		for _, r := range held["p"] {
			if r.Priority > 50 {
				t.Errorf("room still held for %s after it was admitted", r.Unit)
			}
		}
	}
}

// Without the opt-in, the same stream starves the big unit: the test above
// shows the rule at work, not a quiet stream.
func TestWithoutHeldRoomSmallUnitsOvertakeForEver(t *testing.T) {
	w := cohortOfTwo(t)
	for _, q := range []schedtypes.QueueName{"a", "b"} {
		w.m.UpsertQueue(Settings{Name: q, Policy: schedv1alpha1.QueuePolicyPriority})
	}
	for i := 0; w.now.Sub(t0) < 3*time.Minute; i++ {
		for j, q := range []schedtypes.QueueName{"a", "b", "a"} {
			w.add(q, fmt.Sprintf("small-%d-%d", i, j), schedtypes.QuotaName(q), 50, 1)
		}
		if i == 20 {
			w.add("a", "big", "a", 200, 20)
		}
		for _, a := range w.m.Pass(w.try).Admitted {
			w.running[a.Unit.Key] = running{h: schedtypes.Holding{Key: a.Unit.Key, Quota: a.Unit.Quota, Used: a.Unit.Request, Priority: a.Unit.Priority}, end: w.now.Add(10 * time.Second)}
			w.when[a.Unit.Name] = w.now
		}
		w.tick(time.Second)
	}
	if at, ok := w.when["big"]; ok {
		t.Fatalf("without held room the big unit got in at %s: the stream does not starve it", at.Sub(t0))
	}
}

// A unit above its quota's max can never fit: it holds nothing, and the
// small units go on being admitted.
func TestUnitThatCanNeverFitHoldsNothing(t *testing.T) {
	w := smallStream(t, 30, time.Minute)
	if _, ok := w.when["big"]; ok {
		t.Fatal("a 30-CPU unit was admitted to a 24-CPU quota")
	}
	if held := w.m.Held(); len(held) != 0 {
		t.Errorf("room held: %v", held)
	}
	late := 0
	for name, at := range w.when {
		if strings.HasPrefix(name, "small-") && at.After(t0.Add(30*time.Second)) {
			late++
		}
	}
	// 24 CPU of 10-s units: about 2.4 admissions a second.
	if late < 50 {
		t.Errorf("only %d small units admitted in the 30 s after the big one arrived, want the stream to go on", late)
	}
}

// Room is held only while the unit could fit once units of lower priority
// finish: behind units of higher priority that hold the cohort, it holds
// nothing and lower units keep the free room.
func TestNoRoomHeldBehindHigherPriority(t *testing.T) {
	w := cohortOfTwo(t)
	w.add("b", "top", "b", 300, 10)
	w.pass(time.Hour)
	w.add("a", "big", "a", 200, 20)
	w.add("a", "small", "a", 50, 1)
	res := w.pass(time.Hour)
	if len(res.Admitted) != 1 || res.Admitted[0].Unit.Name != "small" {
		t.Fatalf("admitted %v, want only small", names(res.Admitted))
	}
	if held := w.m.Held(); len(held) != 0 {
		t.Errorf("room held: %v", held)
	}
}

// A unit waiting beside held room names the unit it waits behind and the
// numbers.
func TestHeldRoomMessages(t *testing.T) {
	w := cohortOfTwo(t)
	w.add("b", "low", "b", 50, 10)
	w.pass(time.Hour)
	w.add("a", "big", "a", 200, 20)
	msgs := map[string]*schedtypes.Failure{}
	for _, f := range w.pass(time.Hour).Failed {
		msgs[f.Unit.Name] = f.Failure
	}
	// Room is held from the pass that refuses big on: a unit tried earlier in
	// that same pass (another queue's turn) is not held back.
	w.add("b", "later", "b", 50, 1)
	res := w.pass(time.Hour)
	if len(res.Admitted) != 0 {
		t.Fatalf("admitted %v beside the room held for big", names(res.Admitted))
	}
	for _, f := range res.Failed {
		msgs[f.Unit.Name] = f.Failure
	}
	if f := msgs["big"]; f == nil || f.Reason.String() != "short/p/cpu" {
		t.Errorf("big: %+v, want it told why it does not fit", f)
	}
	if held := w.m.Held()["p"]; len(held) != 2 || held[0].Unit != "ns/big" || held[1].Unit != "ns/later" {
		t.Errorf("room held in p: %v, want for big, then for later (against units below priority 50)", held)
	}
	want := "waits behind ns/big (priority 200, quota a, requests 20 cpu), for which room is held: quota p has 14 cpu free (used 10, max 24), of which 20 held for it; the unit requests 1 cpu"
	if f := msgs["later"]; f == nil || f.Message != want || f.Reason.String() != "held/p/ns/big" {
		t.Errorf("later: %+v\nwant message %q", f, want)
	}
}

func names(as []Admitted) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Unit.Name)
	}
	return out
}

// Rooms are listed per cohort: a change in one cohort leaves the lists of
// the others as they were (no rebuild of every cohort per change), and the
// list of the changed cohort follows each note and drop.
func TestHeldRoomListsFollowTheirCohortOnly(t *testing.T) {
	rs := newReservations()
	less := func(a, b *schedtypes.Unit) bool { return a.Priority > b.Priority }
	hold := func(name string, q schedtypes.QueueName, cohort schedtypes.CohortName, prio int32) *schedtypes.Unit {
		u := &schedtypes.Unit{Key: schedtypes.UnitKey("ns/" + name), Name: name, Quota: schedtypes.QuotaName(q), Cohort: cohort, Priority: prio,
			Request: schedtypes.Resources{"cpu": 1000}}
		if held, _ := rs.note(u, q, true, &schedtypes.Failure{Reason: schedtypes.Reason{Kind: schedtypes.WaitInsufficientQuota}, Reserves: true}, less); !held {
			t.Fatalf("%s holds no room", name)
		}
		return u
	}
	rooms := func(c schedtypes.CohortName) string {
		var out []string
		for _, r := range rs.list(c) {
			out = append(out, fmt.Sprintf("%s@%d", r.Unit, r.Priority))
		}
		return strings.Join(out, " ")
	}
	hold("a1", "qa1", "a", 100)
	hold("a2", "qa2", "a", 300)
	b1 := hold("b1", "qb1", "b", 200)
	if got, want := rooms("a"), "ns/a2@300 ns/a1@100"; got != want {
		t.Fatalf("cohort a holds %q, want %q", got, want)
	}
	if got, want := rooms("b"), "ns/b1@200"; got != want {
		t.Fatalf("cohort b holds %q, want %q", got, want)
	}
	before := rs.list("a")
	hold("b2", "qb2", "b", 400)
	rs.drop(b1.Key)
	if got, want := rooms("b"), "ns/b2@400"; got != want {
		t.Fatalf("after a note and a drop cohort b holds %q, want %q", got, want)
	}
	if _, dirty := rs.dirty["a"]; dirty || &rs.list("a")[0] != &before[0] {
		t.Fatal("changes in cohort b made cohort a's list be rebuilt")
	}
	// Beside: the rooms of higher priority only.
	low := &schedtypes.Unit{Key: "ns/x", Cohort: "a", Priority: 200}
	if got := rs.beside(low); len(got) != 1 || got[0].Unit != "ns/a2" {
		t.Fatalf("beside a unit of priority 200 in cohort a: %v, want ns/a2 only", got)
	}
	rs.drop("ns/a2")
	rs.drop("ns/a1")
	if got := rooms("a"); got != "" {
		t.Fatalf("cohort a still holds %q after both drops", got)
	}
	if _, ok := rs.inCohort["a"]; ok {
		t.Fatal("an empty cohort stays in the index")
	}
}

// A unit refused beside the room held for another is tried again once that
// unit is admitted: its room is in use now, and the refused unit waits for
// something else (or may reclaim, in the scheduler), not for a held room.
func TestUnitsHeldBackAreTriedAgainWhenTheHolderIsAdmitted(t *testing.T) {
	w := newHeldWorld(t, quota.Spec{Name: "p", Max: cpu(4)},
		quota.Spec{Name: "a", Parent: "p", Max: cpu(4)}, quota.Spec{Name: "b", Parent: "p", Max: cpu(4)})
	// b's queue is walked first in every pass.
	w.m.UpsertQueue(Settings{Name: "a", Policy: schedv1alpha1.QueuePolicyPriority, Priority: 1, HoldRoom: true})
	w.m.UpsertQueue(Settings{Name: "b", Policy: schedv1alpha1.QueuePolicyPriority, Priority: 2, HoldRoom: true})
	w.add("a", "h0", "a", 200, 2)
	w.pass(time.Hour)
	w.add("b", "l0", "b", 50, 2)
	w.pass(time.Second)
	w.add("a", "big", "a", 200, 2)
	w.add("b", "s1", "b", 50, 1)
	w.pass(time.Hour) // big holds 2 (l0 is below it); s1 does not fit
	if held := w.m.Held()["p"]; len(held) == 0 || held[0].Unit != "ns/big" {
		t.Fatalf("room held in p: %v, want it held for big", held)
	}
	w.tick(time.Second) // l0 ends
	res := w.pass(time.Hour)
	if got := names(res.Admitted); len(got) != 1 || got[0] != "big" {
		t.Fatalf("admitted %v, want big", got)
	}
	failed := func(res *PassResult) map[string]*schedtypes.Failure {
		out := map[string]*schedtypes.Failure{}
		for _, f := range res.Failed {
			out[f.Unit.Name] = f.Failure
		}
		return out
	}
	if f := failed(res)["s1"]; f == nil || f.Reason.String() != "held/p/ns/big" {
		t.Fatalf("s1, tried before big in that pass: %+v, want it held back by big's room", f)
	}
	if f := failed(w.pass(time.Hour))["s1"]; f == nil || f.Reason.String() != "short/p/cpu" {
		t.Errorf("s1 after big's admission: %+v, want it tried again and told p is short", f)
	}
}
