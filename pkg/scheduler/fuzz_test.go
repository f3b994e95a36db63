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
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// The protocol under random sequences of what happens in a cluster: units
// come, passes admit, the extension runs, finishes and gives back evicted
// units, units are deleted, the scheduler restarts from the API, and status
// writes conflict or fail. After every step, what the API says units hold
// never exceeds a quota (the oracle counts from the objects, not from the
// scheduler); at the end, once every holder is done, no unit is left
// waiting and the scheduler's charges match the objects.

// protocolCapacity is each quota's CPU, in cores; units ask 1 to 3.
var protocolCapacity = map[string]int64{"qa": 4, "qb": 3}

type protocolRun struct {
	f     *fixture
	next  int
	fails []error
}

func newProtocolRun(t *testing.T) *protocolRun {
	r := &protocolRun{f: newFixture(t, nil)}
	for q, c := range protocolCapacity {
		r.f.plugin.setCapacity(schedtypes.QuotaName(q), c)
		r.f.addQueue(t, utiltesting.MakeQueue(q).Obj())
	}
	// Each write may be answered by an injected failure, first come first served.
	r.f.failPatches(func(obj client.Object) error {
		if _, ok := obj.(*schedv1alpha1.QueueUnit); !ok || len(r.fails) == 0 {
			return nil
		}
		err := r.fails[0]
		r.fails = r.fails[1:]
		return err
	})
	return r
}

func (r *protocolRun) units(t *testing.T) []schedv1alpha1.QueueUnit {
	t.Helper()
	list := &schedv1alpha1.QueueUnitList{}
	if err := r.f.c.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items
}

// first returns the first unit (by name, from seed) for which pick holds.
func (r *protocolRun) first(t *testing.T, seed byte, pick func(u *schedv1alpha1.QueueUnit) bool) *schedv1alpha1.QueueUnit {
	us := r.units(t)
	for i := range us {
		u := &us[(i+int(seed))%len(us)]
		if pick(u) {
			return u
		}
	}
	return nil
}

// extension writes a unit's status as the job extension does.
func (r *protocolRun) extension(t *testing.T, u *schedv1alpha1.QueueUnit, mutate func(u *schedv1alpha1.QueueUnit)) {
	t.Helper()
	mutate(u)
	if err := r.f.c.Status().Update(context.Background(), u); err != nil && !apierrors.IsConflict(err) {
		t.Fatal(err)
	}
	r.f.sync(t)
}

func (r *protocolRun) step(t *testing.T, op, arg byte) {
	t.Helper()
	f := r.f
	now := metav1.NewTime(f.clk.Now())
	switch op % 11 {
	case 0: // a unit comes
		q := "qa"
		if arg%2 == 1 {
			q = "qb"
		}
		f.addUnit(t, makeUnit(fmt.Sprintf("u%03d", r.next), q, fmt.Sprint(1+int(arg)%3)).Obj())
		r.next++
	case 1:
		f.pass(t)
	case 2: // the extension starts an admitted job
		if u := r.first(t, arg, func(u *schedv1alpha1.QueueUnit) bool { return u.Status.Phase == schedv1alpha1.QueueUnitPhaseDequeued }); u != nil {
			r.extension(t, u, func(u *schedv1alpha1.QueueUnit) { u.Status.Phase = schedv1alpha1.QueueUnitPhaseRunning })
		}
	case 3: // a job ends
		if u := r.first(t, arg, func(u *schedv1alpha1.QueueUnit) bool { return u.Status.Phase == schedv1alpha1.QueueUnitPhaseRunning }); u != nil {
			r.extension(t, u, func(u *schedv1alpha1.QueueUnit) { queueunit.MarkFinished(u, arg%4 == 0, "done", now) })
		}
	case 4: // the scheduler evicts a holder
		if u := r.first(t, arg, func(u *schedv1alpha1.QueueUnit) bool { return queueunit.HoldsQuota(u.Status.Phase) }); u != nil {
			f.s.reports.evict(u, schedv1alpha1.ReasonPreempted, "fuzz")
			f.drain(t)
			f.sync(t)
		}
	case 5: // the extension gives an evicted unit back
		if u := r.first(t, arg, queueunit.IsEvicting); u != nil {
			r.extension(t, u, func(u *schedv1alpha1.QueueUnit) { queueunit.Requeue(u, queueunit.ReasonRequeued, "evicted", now) })
		}
	case 6: // a unit is deleted
		if u := r.first(t, arg, func(*schedv1alpha1.QueueUnit) bool { return true }); u != nil {
			if err := f.c.Delete(context.Background(), u); err != nil {
				t.Fatal(err)
			}
			f.s.intake.onUnitDelete(u)
		}
	case 7:
		r.restart(t)
	case 8:
		r.fails = append(r.fails, apierrors.NewConflict(schema.GroupResource{Resource: "queueunits"}, "x", fmt.Errorf("injected")))
	case 9:
		r.fails = append(r.fails, apierrors.NewInternalError(fmt.Errorf("injected")))
	case 10:
		f.clk.Step(2 * time.Second)
		f.drain(t)
		f.sync(t)
	}
}

// restart drops the scheduler and its memory and builds a new one from the
// API, as after a crash: what it had not written yet is lost.
func (r *protocolRun) restart(t *testing.T) {
	t.Helper()
	f := r.f
	f.s.writer.decide.ShutDown()
	f.s.writer.inform.ShutDown()
	f.s.lifecycle.queue.ShutDown()
	plugin := newTestPlugin()
	for q, c := range protocolCapacity {
		plugin.setCapacity(schedtypes.QuotaName(q), c)
	}
	s, err := build(deps{client: f.c, reader: f.c, recorder: f.events}, plugin.registry(), f.s.env.opts)
	if err != nil {
		t.Fatal(err)
	}
	s.writer.decide.ShutDown()
	s.writer.inform.ShutDown()
	s.writer.decide, s.writer.inform = newClockQueue(f.clk), newClockQueue(f.clk)
	t.Cleanup(func() { s.lifecycle.queue.ShutDown() })
	f.w, f.s, f.plugin = s.writer, s, plugin
	queues := &schedv1alpha1.QueueList{}
	if err := f.c.List(context.Background(), queues); err != nil {
		t.Fatal(err)
	}
	for i := range queues.Items {
		s.queueSync.onQueue(&queues.Items[i])
	}
	for _, u := range r.units(t) {
		s.intake.onUnit(u.DeepCopy())
	}
	s.env.leading.Store(true)
	s.intake.resyncAll()
}

// check is the safety oracle: what the objects say is held fits every quota.
func (r *protocolRun) check(t *testing.T, when string) {
	t.Helper()
	held := map[string]schedtypes.Resources{}
	for i := range r.units(t) {
		u := &r.units(t)[i]
		if queueunit.HoldsQuota(u.Status.Phase) {
			held[u.Status.Quota] = held[u.Status.Quota].Add(queueunit.Usage(u))
		}
	}
	for q, h := range held {
		if h["cpu"] > protocolCapacity[q]*1000 {
			t.Fatalf("%s: units hold %d mCPU of quota %s, max %d000", when, h["cpu"], q, protocolCapacity[q])
		}
	}
}

// settle lets every holder finish and every pass run; no unit may be left
// waiting (each fits its quota alone), and the charges follow the objects.
func (r *protocolRun) settle(t *testing.T) {
	t.Helper()
	r.fails = nil
	f := r.f
	for round := 0; round < 200; round++ {
		now := metav1.NewTime(f.clk.Now())
		waiting := false
		for _, u := range r.units(t) {
			u := u
			switch {
			case queueunit.IsEvicting(&u):
				// Given back, it waits to be admitted again.
				r.extension(t, &u, func(u *schedv1alpha1.QueueUnit) { queueunit.Requeue(u, queueunit.ReasonRequeued, "evicted", now) })
				waiting = true
			case queueunit.HoldsQuota(u.Status.Phase):
				r.extension(t, &u, func(u *schedv1alpha1.QueueUnit) { queueunit.MarkFinished(u, false, "done", now) })
			case !queueunit.IsFinished(u.Status.Phase):
				waiting = true
			}
		}
		r.check(t, fmt.Sprintf("settling, round %d", round))
		if !waiting {
			break
		}
		f.clk.Step(2 * time.Second)
		f.pass(t)
	}
	for _, u := range r.units(t) {
		if !queueunit.IsFinished(u.Status.Phase) {
			t.Fatalf("unit %s lost: phase %q, message %q, after every holder finished", u.Name, u.Status.Phase, u.Status.Message)
		}
		if _, charged := f.plugin.chargedTo(keyOf(&u)); charged {
			t.Fatalf("unit %s finished but still charged", u.Name)
		}
	}
}

func FuzzProtocol(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0, 1, 1, 1, 2, 0, 3, 0, 1, 1})
	f.Add([]byte{0, 0, 0, 1, 0, 2, 1, 0, 4, 0, 1, 0, 5, 0, 1, 0})
	f.Add([]byte{0, 0, 0, 1, 8, 0, 1, 0, 10, 0, 1, 0, 7, 0, 1, 0, 2, 0})
	f.Add([]byte{0, 1, 0, 2, 0, 3, 9, 0, 1, 0, 10, 0, 1, 0, 6, 1, 7, 0, 1, 0})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 1, 0, 4, 1, 4, 2, 7, 0, 5, 0, 5, 1, 1, 0, 10, 0, 1, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 120 {
			ops = ops[:120]
		}
		r := newProtocolRun(t)
		for i := 0; i+1 < len(ops); i += 2 {
			r.step(t, ops[i], ops[i+1])
			r.check(t, fmt.Sprintf("after step %d (op %d)", i/2, ops[i]%11))
		}
		r.settle(t)
	})
}

// The same oracle over pseudo-random sequences, so plain `go test` explores
// more than the seed corpus (`go test -fuzz=FuzzProtocol` searches further).
func TestProtocolRandomSequences(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 2026))
			r := newProtocolRun(t)
			for i := 0; i < 80; i++ {
				op, arg := byte(rnd.IntN(11)), byte(rnd.IntN(256))
				if i < 6 {
					op = 0 // a few units first
				}
				r.step(t, op, arg)
				r.check(t, fmt.Sprintf("seed %d, step %d (op %d)", seed, i, op))
			}
			r.settle(t)
		})
	}
}
