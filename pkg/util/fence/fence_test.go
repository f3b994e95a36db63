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

package fence

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	clocktesting "k8s.io/utils/clock/testing"
)

// memLock is a lease lock in memory that can be made to fail.
type memLock struct {
	id   string
	rec  *resourcelock.LeaderElectionRecord
	fail error
}

func (m *memLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	if m.rec == nil {
		return nil, nil, errors.New("not found")
	}
	return m.rec, nil, nil
}

func (m *memLock) Create(_ context.Context, ler resourcelock.LeaderElectionRecord) error {
	if m.fail != nil {
		return m.fail
	}
	m.rec = &ler
	return nil
}

func (m *memLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	return m.Create(ctx, ler)
}

func (m *memLock) RecordEvent(string) {}
func (m *memLock) Identity() string   { return m.id }
func (m *memLock) Describe() string   { return "mem/" + m.id }
func record(holder string) resourcelock.LeaderElectionRecord {
	return resourcelock.LeaderElectionRecord{HolderIdentity: holder, LeaseDurationSeconds: 15}
}

func TestNoWritesBeforeTheLeaseIsHeld(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	l := New(&memLock{id: "a"}, 10*time.Second, clk)
	if l.Allowed() {
		t.Fatal("writes allowed before any acquisition")
	}
	if err := l.Create(context.Background(), record("a")); err != nil {
		t.Fatal(err)
	}
	if !l.Allowed() {
		t.Fatal("writes refused right after acquiring the lease")
	}
}

// A leader paused past its renew deadline (SIGSTOP) writes nothing when it
// resumes, although nothing told it it lost the lease.
func TestWritesStopAtTheRenewDeadline(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	l := New(&memLock{id: "a"}, 10*time.Second, clk)
	if err := l.Create(context.Background(), record("a")); err != nil {
		t.Fatal(err)
	}
	clk.SetTime(clk.Now().Add(9 * time.Second))
	if !l.Allowed() {
		t.Fatal("refused before the deadline")
	}
	clk.SetTime(clk.Now().Add(time.Second))
	if l.Allowed() {
		t.Fatal("allowed at the renew deadline: another replica may take over 5 s later and writes may still be on their way")
	}
	if err := l.Update(context.Background(), record("a")); err != nil {
		t.Fatal(err)
	}
	if !l.Allowed() {
		t.Fatal("refused after a renewal")
	}
}

// The bound counts from when the renewal began, not when it returned: the
// API server may have stored it at any moment in between.
func TestTheBoundCountsFromTheStartOfTheRenewal(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	slow := &slowLock{memLock: memLock{id: "a"}, clk: clk, takes: 4 * time.Second}
	l := New(slow, 10*time.Second, clk)
	if err := l.Create(context.Background(), record("a")); err != nil {
		t.Fatal(err)
	}
	clk.SetTime(clk.Now().Add(6 * time.Second))
	if l.Allowed() {
		t.Fatal("allowed 10 s after the renewal began")
	}
}

// A renewal written with a renewTime from before its call (client-go's
// elector stamps the record when its attempt begins, then may fall back to
// a read and a second update, seconds later) counts from that renewTime:
// the Lease shows it to everyone else.
func TestTheBoundCountsFromAnEarlierRenewTime(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	l := New(&memLock{id: "a"}, 10*time.Second, clk)
	stamped := record("a")
	stamped.RenewTime = metav1.NewTime(clk.Now())
	clk.SetTime(clk.Now().Add(8 * time.Second))
	if err := l.Update(context.Background(), stamped); err != nil {
		t.Fatal(err)
	}
	if !l.Allowed() {
		t.Fatal("refused within the renew deadline of the renewTime written")
	}
	clk.SetTime(clk.Now().Add(3 * time.Second))
	if l.Allowed() {
		t.Fatal("allowed 11 s after the renewTime the Lease shows")
	}
}

type slowLock struct {
	memLock
	clk   *clocktesting.FakePassiveClock
	takes time.Duration
}

func (s *slowLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	s.clk.SetTime(s.clk.Now().Add(s.takes))
	return s.memLock.Create(ctx, ler)
}

func TestFailedRenewalsKeepTheOldBoundAndReleaseStops(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := &memLock{id: "a"}
	l := New(m, 10*time.Second, clk)
	if err := l.Create(context.Background(), record("a")); err != nil {
		t.Fatal(err)
	}
	m.fail = errors.New("etcd is down")
	clk.SetTime(clk.Now().Add(5 * time.Second))
	if err := l.Update(context.Background(), record("a")); err == nil {
		t.Fatal("the failing lock did not fail")
	}
	if !l.Allowed() {
		t.Fatal("a failed renewal ended writes before the deadline of the last good one")
	}
	clk.SetTime(clk.Now().Add(5 * time.Second))
	if l.Allowed() {
		t.Fatal("a failed renewal extended the bound")
	}
	m.fail = nil
	if err := l.Update(context.Background(), record("a")); err != nil {
		t.Fatal(err)
	}
	// Leader election releases on shutdown by writing an empty holder.
	if err := l.Update(context.Background(), record("")); err != nil {
		t.Fatal(err)
	}
	if l.Allowed() {
		t.Fatal("allowed after the lease was released")
	}
	// Someone else's record (a takeover seen through this lock) ends writes too.
	if err := l.Update(context.Background(), record("b")); err != nil {
		t.Fatal(err)
	}
	if l.Allowed() {
		t.Fatal("allowed with another holder")
	}
}

// A replica paused past its lease releases, on resuming, what it last
// observed; the lease read just before names its successor, and the
// release must not wipe the successor's hold out.
func TestReleaseLeavesASuccessorsLeaseAlone(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	mem := &memLock{id: "a"}
	l := New(mem, 10*time.Second, clk)
	ctx := context.Background()
	if err := l.Create(ctx, record("a")); err != nil {
		t.Fatal(err)
	}
	// Paused: b takes the lease over.
	mem.rec = &resourcelock.LeaderElectionRecord{HolderIdentity: "b", LeaseDurationSeconds: 15}
	clk.Step(20 * time.Second)
	if _, _, err := l.Get(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Update(ctx, resourcelock.LeaderElectionRecord{LeaseDurationSeconds: 1}); err != nil {
		t.Fatal(err)
	}
	if mem.rec.HolderIdentity != "b" {
		t.Fatalf("the release wrote holder %q over the successor b", mem.rec.HolderIdentity)
	}
	if l.Allowed() {
		t.Error("writes allowed after the release")
	}
	// Its own lease is given back as before.
	mem.rec = &resourcelock.LeaderElectionRecord{HolderIdentity: "a", LeaseDurationSeconds: 15}
	if _, _, err := l.Get(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Update(ctx, resourcelock.LeaderElectionRecord{LeaseDurationSeconds: 1}); err != nil {
		t.Fatal(err)
	}
	if mem.rec.HolderIdentity != "" {
		t.Errorf("its own lease was not released: holder %q", mem.rec.HolderIdentity)
	}
}
