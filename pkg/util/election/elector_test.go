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

package election

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// store is a Lease in memory with a version, shared by the replicas' locks;
// every write is delivered to the watchers, as a watch would.
type store struct {
	mu       sync.Mutex
	rec      *resourcelock.LeaderElectionRecord
	version  int
	failAll  error
	watchers []*Elector
}

func (s *store) write(rec resourcelock.LeaderElectionRecord) {
	s.rec = &rec
	s.version++
	for _, w := range s.watchers {
		w.Observe(&rec)
	}
}

func (s *store) holder() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec == nil {
		return ""
	}
	return s.rec.HolderIdentity
}

func (s *store) record() resourcelock.LeaderElectionRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.rec
}

// lock is one replica's lock on the store: it writes on the version it
// read or wrote last, as the Lease lock does.
type lock struct {
	s    *store
	id   string
	seen int
}

var gr = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}

func (l *lock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if l.s.failAll != nil {
		return nil, nil, l.s.failAll
	}
	if l.s.rec == nil {
		return nil, nil, apierrors.NewNotFound(gr, "lease")
	}
	l.seen = l.s.version
	rec := *l.s.rec
	return &rec, nil, nil
}

func (l *lock) Create(_ context.Context, ler resourcelock.LeaderElectionRecord) error {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if l.s.failAll != nil {
		return l.s.failAll
	}
	if l.s.rec != nil {
		return apierrors.NewAlreadyExists(gr, "lease")
	}
	l.s.write(ler)
	l.seen = l.s.version
	return nil
}

func (l *lock) Update(_ context.Context, ler resourcelock.LeaderElectionRecord) error {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if l.s.failAll != nil {
		return l.s.failAll
	}
	if l.s.rec == nil || l.seen != l.s.version {
		return apierrors.NewConflict(gr, "lease", errors.New("stale version"))
	}
	l.s.write(ler)
	l.seen = l.s.version
	return nil
}

func (l *lock) RecordEvent(string) {}
func (l *lock) Identity() string   { return l.id }
func (l *lock) Describe() string   { return "test/lease" }

var t0 = time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)

const (
	lease = 15 * time.Second
	renew = 10 * time.Second
	retry = 2 * time.Second
)

func newElector(t *testing.T, s *store, id string, clk *clocktesting.FakeClock) *Elector {
	t.Helper()
	e, err := New(Options{Lock: &lock{s: s, id: id}, LeaseDuration: lease, RenewDeadline: renew, RetryPeriod: retry, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.watchers = append(s.watchers, e)
	s.mu.Unlock()
	e.watching.Store(true) // the store delivers every write, as a watch
	return e
}

// run starts e; the returned channel gives Start's error.
func run(ctx context.Context, e *Elector) <-chan error {
	done := make(chan error, 1)
	go func() { done <- e.Start(ctx) }()
	return done
}

// eventually polls cond (real time) until it holds or 10 s passed.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// settle waits until every goroutine on clk waits on a timer, so that a
// step of the clock is seen by all.
func settle(t *testing.T, clk *clocktesting.FakeClock, waiters int) {
	t.Helper()
	eventually(t, "the electors wait on the clock", func() bool { return clk.Waiters() >= waiters })
}

func elected(e *Elector) bool {
	select {
	case <-e.Elected():
		return true
	default:
		return false
	}
}

// heldBy writes a's renewal to the store at the clock's time.
func renewAs(s *store, holder string, clk *clocktesting.FakeClock, transitions int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := metav1.NewTime(clk.Now())
	s.write(resourcelock.LeaderElectionRecord{HolderIdentity: holder, LeaseDurationSeconds: 15, AcquireTime: metav1.NewTime(t0), RenewTime: now, LeaderTransitions: transitions})
}

// A standby takes the lease a lease duration after it saw the holder's last
// renewal, and not a moment before; while the holder renews, never.
func TestStandbyTakesTheLeaseWhenItRunsOut(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	s := &store{}
	renewAs(s, "a", clk, 3)
	b := newElector(t, s, "b", clk)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := run(ctx, b)
	// The holder renews every 2 s for a minute: b never leads.
	for range 30 {
		settle(t, clk, 1)
		clk.Step(retry)
		renewAs(s, "a", clk, 3)
	}
	settle(t, clk, 1)
	if elected(b) || s.holder() != "a" {
		t.Fatalf("b took a lease that was renewed every %s (holder %q)", retry, s.holder())
	}
	// The holder dies right after its last renewal, seen now.
	lastSeen := clk.Now()
	clk.Step(lease - time.Millisecond)
	settle(t, clk, 1)
	if elected(b) {
		t.Fatalf("b took the lease %s after it saw the last renewal, before it ran out", clk.Since(lastSeen))
	}
	clk.Step(time.Millisecond)
	eventually(t, "b leads once the lease ran out", func() bool { return elected(b) })
	rec := s.record()
	if rec.HolderIdentity != "b" || rec.LeaderTransitions != 4 || !rec.AcquireTime.Time.Equal(lastSeen.Add(lease)) {
		t.Errorf("lease after the takeover: holder %q, transitions %d, acquired %s; want b, 4, %s",
			rec.HolderIdentity, rec.LeaderTransitions, rec.AcquireTime.Time, lastSeen.Add(lease))
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// With the holder's renewals seen by the watch, the standby reads the lease
// only when it runs out: no read per renewal.
func TestStandbyReadsOnlyWhenTheLeaseRunsOut(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	s := &store{}
	renewAs(s, "a", clk, 0)
	counted := &countingLock{lock: lock{s: s, id: "b"}}
	b, err := New(Options{Lock: counted, LeaseDuration: lease, RenewDeadline: renew, RetryPeriod: retry, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	s.watchers = append(s.watchers, b)
	b.watching.Store(true)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := run(ctx, b)
	for range 30 {
		settle(t, clk, 1)
		clk.Step(retry)
		renewAs(s, "a", clk, 0)
	}
	settle(t, clk, 1)
	if n := counted.gets(); n != 1 {
		t.Errorf("the standby read the lease %d times over 30 renewals; want 1 (at start)", n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Without a watch (a role that may not list the Lease), a standby reads
// the lease every retry period and still takes it a lease duration after it
// saw the last renewal.
func TestStandbyWithoutAWatchReadsEachRetryPeriod(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	s := &store{}
	renewAs(s, "a", clk, 0)
	counted := &countingLock{lock: lock{s: s, id: "b"}}
	b, err := New(Options{Lock: counted, LeaseDuration: lease, RenewDeadline: renew, RetryPeriod: retry, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := run(ctx, b)
	// One read at start, then one per retry period: each sees a renewal.
	eventually(t, "the first read", func() bool { return counted.gets() == 1 })
	for i := 2; i <= 11; i++ {
		renewAs(s, "a", clk, 0)
		settle(t, clk, 1)
		clk.Step(retry)
		eventually(t, "a read each retry period", func() bool { return counted.gets() == i })
	}
	lastRead := clk.Now()
	if elected(b) {
		t.Fatal("b took a renewed lease")
	}
	for clk.Since(lastRead) < lease-retry {
		settle(t, clk, 1)
		clk.Step(retry)
	}
	settle(t, clk, 1)
	if elected(b) {
		t.Fatalf("b took the lease %s after it read the last renewal", clk.Since(lastRead))
	}
	clk.Step(retry)
	eventually(t, "b leads", func() bool { return elected(b) })
	if got := s.record().AcquireTime.Time; got.Before(lastRead.Add(lease)) {
		t.Errorf("taken at %s, before the lease read at %s ran out", got, lastRead)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

type countingLock struct {
	lock
	mu sync.Mutex
	n  int
}

func (c *countingLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.lock.Get(ctx)
}

func (c *countingLock) gets() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// A lease given back (no holder) or missing is taken at once.
func TestFreeOrMissingLeaseIsTakenAtOnce(t *testing.T) {
	for name, s := range map[string]*store{
		"missing":    {},
		"given back": {rec: &resourcelock.LeaderElectionRecord{LeaseDurationSeconds: 1, LeaderTransitions: 2}, version: 1},
	} {
		t.Run(name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(t0)
			b := newElector(t, s, "b", clk)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := run(ctx, b)
			eventually(t, "b leads", func() bool { return elected(b) })
			if s.holder() != "b" {
				t.Errorf("holder %q, want b", s.holder())
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// blocker is a leader's runnable that returns only when told to.
type blocker struct {
	started, release chan struct{}
}

func (b *blocker) Start(ctx context.Context) error {
	close(b.started)
	<-ctx.Done()
	<-b.release
	return nil
}

// The leader renews every retry period, runs the gated work only while it
// leads, and gives the lease back after that work returned.
func TestLeaderRenewsAndGivesBackAfterItsWork(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	s := &store{}
	a := newElector(t, s, "a", clk)
	work := &blocker{started: make(chan struct{}), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	workDone := make(chan error, 1)
	go func() { workDone <- a.Gate(work).Start(ctx) }()
	done := run(ctx, a)
	eventually(t, "a leads", func() bool { return elected(a) })
	<-work.started
	for i := 1; i <= 3; i++ {
		settle(t, clk, 1)
		clk.Step(retry)
		eventually(t, "a renews", func() bool { return s.record().RenewTime.Time.Equal(t0.Add(time.Duration(i) * retry)) })
	}
	cancel()
	settle(t, clk, 0)
	if s.holder() != "a" {
		t.Fatalf("the lease was given back (holder %q) while the leader's work still ran", s.holder())
	}
	close(work.release)
	if err := <-workDone; err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	rec := s.record()
	if rec.HolderIdentity != "" || rec.LeaseDurationSeconds != 1 {
		t.Errorf("after stopping: holder %q, lease %ds; want none, 1s", rec.HolderIdentity, rec.LeaseDurationSeconds)
	}
}

// A leader that cannot renew for the renew deadline stops with ErrLost, and
// work not started yet never starts.
func TestLeaderLosesAtTheRenewDeadline(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	s := &store{}
	a := newElector(t, s, "a", clk)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := run(ctx, a)
	eventually(t, "a leads", func() bool { return elected(a) })
	s.mu.Lock()
	s.failAll = errors.New("etcd is restarting")
	s.mu.Unlock()
	// Step the clock by 100 ms whenever the leader waits on it, until it
	// gives up.
	var err error
	deadline := time.Now().Add(10 * time.Second)
loop:
	for {
		select {
		case err = <-done:
			break loop
		default:
		}
		switch {
		case clk.Since(t0) > renew+retry:
			t.Fatalf("still leading %s after the last renewal, with none succeeding", clk.Since(t0))
		case time.Now().After(deadline):
			t.Fatal("timed out")
		case clk.Waiters() > 0:
			clk.Step(100 * time.Millisecond)
		default:
			time.Sleep(time.Millisecond)
		}
	}
	if !errors.Is(err, ErrLost) {
		t.Fatalf("Start returned %v, want ErrLost", err)
	}
	if since := clk.Since(t0); since < renew {
		t.Errorf("gave up %s after the last renewal, before the renew deadline %s", since, renew)
	}
	late := &blocker{started: make(chan struct{}), release: make(chan struct{})}
	close(late.release)
	if err := a.Gate(late).Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-late.started:
		t.Error("gated work started after the lease was lost")
	default:
	}
}

// A leader whose lease another replica holds (it was paused past the lease)
// stops at its next renewal.
func TestLeaderStopsWhenTheLeaseIsTaken(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	s := &store{}
	a := newElector(t, s, "a", clk)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := run(ctx, a)
	eventually(t, "a leads", func() bool { return elected(a) })
	renewAs(s, "c", clk, 1)
	settle(t, clk, 1)
	clk.Step(retry)
	if err := <-done; !errors.Is(err, ErrLost) {
		t.Fatalf("Start returned %v, want ErrLost", err)
	}
	if s.holder() != "c" {
		t.Errorf("holder %q, want c (the lease must not be given back or retaken)", s.holder())
	}
}

// The watch's record and the lock's read of the same Lease are one
// observation, and two renewals within one second are two.
func TestWatchedAndReadRecordsCompare(t *testing.T) {
	cs := fake.NewClientset()
	l := &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: "ns", Name: "lease"}, Client: cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: "a"}}
	now := metav1.NewTime(t0.Add(100 * time.Millisecond))
	if err := l.Create(t.Context(), resourcelock.LeaderElectionRecord{HolderIdentity: "a", LeaseDurationSeconds: 15, AcquireTime: now, RenewTime: now, LeaderTransitions: 2}); err != nil {
		t.Fatal(err)
	}
	read, _, err := l.Get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	lease, err := cs.CoordinationV1().Leases("ns").Get(t.Context(), "lease", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	watched := resourcelock.LeaseSpecToLeaderElectionRecord(&lease.Spec)
	if key(watched) != key(read) {
		t.Errorf("watched %s, read %s", key(watched), key(read))
	}
	next := *read
	next.RenewTime = metav1.NewTime(t0.Add(600 * time.Millisecond))
	if key(&next) == key(read) {
		t.Errorf("renewals 0.5 s apart compare equal: %s", key(read))
	}
}

type needs bool

func (n needs) Start(context.Context) error { return nil }
func (n needs) NeedLeaderElection() bool    { return bool(n) }

type plain struct{}

func (plain) Start(context.Context) error { return nil }

func TestNeedsLeaderFollowsTheManagersGroups(t *testing.T) {
	for name, c := range map[string]struct {
		r    manager.Runnable
		want bool
	}{
		"says it needs the leader":      {needs(true), true},
		"says it does not":              {needs(false), false},
		"says nothing (a controller)":   {plain{}, true},
		"an HTTP server for all":        {&manager.Server{}, false},
		"an HTTP server for the leader": {&manager.Server{OnlyServeWhenLeader: true}, true},
	} {
		if got := NeedsLeader(c.r); got != c.want {
			t.Errorf("%s: NeedsLeader %v, want %v", name, got, c.want)
		}
	}
}

func TestOptionsAreChecked(t *testing.T) {
	l := &lock{s: &store{}, id: "a"}
	for name, o := range map[string]Options{
		"no lock":                   {LeaseDuration: lease, RenewDeadline: renew, RetryPeriod: retry},
		"renew deadline too long":   {Lock: l, LeaseDuration: lease, RenewDeadline: lease, RetryPeriod: retry},
		"retry beyond the deadline": {Lock: l, LeaseDuration: lease, RenewDeadline: renew, RetryPeriod: renew},
		"fractional lease":          {Lock: l, LeaseDuration: lease + time.Millisecond, RenewDeadline: renew, RetryPeriod: retry},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
