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
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/koordinator-sh/koord-queue/pkg/util/fence"
)

// ErrLost is returned by Start when this replica could not renew its lease
// within the renew deadline, or found it taken by another.
var ErrLost = errors.New("leader election lost")

// Options configure an Elector.
type Options struct {
	// Lock is the Lease lock (the fenced lock of pkg/util/fence).
	Lock resourcelock.Interface
	// LeaseDuration is how long a lease lasts after it was last seen to
	// change; RenewDeadline how long the leader keeps trying to renew;
	// RetryPeriod how often it renews.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Clock is the real clock but in tests.
	Clock clock.Clock
	// Leases, Namespace and Name, when Leases is set, are the Lease to
	// watch; without them a standby reads the lease again only when the
	// record it read last runs out.
	Leases          coordinationv1client.LeasesGetter
	Namespace, Name string
}

func (o Options) validate() error {
	switch {
	case o.Lock == nil:
		return errors.New("leader election: no lock")
	case o.RetryPeriod <= 0 || o.RenewDeadline <= o.RetryPeriod || o.LeaseDuration <= o.RenewDeadline:
		return fmt.Errorf("leader election: need 0 < retry period (%s) < renew deadline (%s) < lease duration (%s)",
			o.RetryPeriod, o.RenewDeadline, o.LeaseDuration)
	case o.LeaseDuration%time.Second != 0:
		return fmt.Errorf("leader election: the lease duration %s is not whole seconds, as the Lease records it", o.LeaseDuration)
	}
	return nil
}

// Elector is one replica's side of the election: a manager.Runnable that
// runs on every replica, takes the Lease when it is free or expired, renews
// it and gives it back when the manager stops.
type Elector struct {
	o   Options
	clk clock.Clock

	mu sync.Mutex
	// observed is the lease record last seen, through the watch or a read
	// (key: every field, times to the nanosecond, which the record's JSON
	// rounds to the second); observedAt is when it was first seen.
	observed    resourcelock.LeaderElectionRecord
	observedKey string
	observedAt  time.Time
	// changed is signalled when the watch brings a record not seen before;
	// watching is true once the watch has listed the Lease. Until then (a
	// role without list and watch of it) a standby reads it at each retry
	// period, as client-go's elector does.
	changed  chan struct{}
	watching atomic.Bool

	elected chan struct{}
	gate    gate
}

var _ manager.LeaderElectionRunnable = (*Elector)(nil)

// New checks o and returns an Elector that has not started.
func New(o Options) (*Elector, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return &Elector{o: o, clk: o.Clock, changed: make(chan struct{}, 1), elected: make(chan struct{})}, nil
}

// NeedLeaderElection is false: it is the election.
func (e *Elector) NeedLeaderElection() bool { return false }

// Elected is closed once this replica leads.
func (e *Elector) Elected() <-chan struct{} { return e.elected }

// Observe is told of the lease record the watch delivered. A record not
// seen before restarts the count to its expiry.
func (e *Elector) Observe(rec *resourcelock.LeaderElectionRecord) {
	if e.observe(rec) {
		select {
		case e.changed <- struct{}{}:
		default:
		}
	}
}

// observe remembers rec as the last record seen and when it was first seen;
// it reports whether rec is new.
func (e *Elector) observe(rec *resourcelock.LeaderElectionRecord) bool {
	k := key(rec)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.observedAt.IsZero() || k != e.observedKey {
		e.observed, e.observedKey, e.observedAt = *rec, k, e.clk.Now()
		return true
	}
	return false
}

// key tells records apart: two renewals within one second differ in it.
func key(rec *resourcelock.LeaderElectionRecord) string {
	return fmt.Sprintf("%s/%d/%d/%s/%s", rec.HolderIdentity, rec.LeaseDurationSeconds, rec.LeaderTransitions,
		rec.AcquireTime.Format(time.RFC3339Nano), rec.RenewTime.Format(time.RFC3339Nano))
}

// expiry is when the lease last observed runs out; zero when it is free
// (no holder). false when nothing was observed yet.
func (e *Elector) expiry() (time.Time, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.observedAt.IsZero() {
		return time.Time{}, false
	}
	if e.observed.HolderIdentity == "" {
		return time.Time{}, true
	}
	return e.observedAt.Add(e.o.LeaseDuration), true
}

// Start takes the lease, leads until ctx ends and then gives the lease back
// once the gated runnables have returned. It returns ErrLost when the lease
// could not be kept; the process is then expected to end.
func (e *Elector) Start(ctx context.Context) error {
	log := klog.FromContext(ctx).WithName("leader-election").WithValues("lease", e.o.Lock.Describe(), "identity", e.o.Lock.Identity())
	ctx = klog.NewContext(ctx, log)
	if e.o.Leases != nil {
		go e.watchLease(ctx, e.o.Leases, e.o.Namespace, e.o.Name)
	}
	held, ok := e.acquire(ctx)
	if !ok {
		e.gate.close()
		return nil
	}
	log.Info("Acquired the lease", "transitions", held.LeaderTransitions)
	close(e.elected)
	err := e.lead(ctx, held)
	// No gated runnable starts after this; those running return on ctx.
	e.gate.close()
	if err != nil {
		log.Error(err, "Stopped leading")
		return err
	}
	e.gate.wait()
	e.release(ctx)
	return nil
}

// acquire returns the record this replica wrote when it took the lease, or
// false when ctx ended first. It tries when no lease was observed yet, when
// the observed one is free, and at the moment the observed one runs out; in
// between it waits for the watch. Without a watch it reads the lease at
// each retry period.
func (e *Elector) acquire(ctx context.Context) (resourcelock.LeaderElectionRecord, bool) {
	log := klog.FromContext(ctx)
	waiting := ""
	for {
		expiry, seen := e.expiry()
		if !seen || !expiry.After(e.clk.Now()) || !e.watching.Load() {
			held, holder, err := e.tryAcquire(ctx)
			switch {
			case err != nil:
				log.Info("Could not take the lease; trying again", "err", err.Error())
			case holder == e.o.Lock.Identity():
				return held, true
			case holder != waiting:
				log.Info("The lease is held by another replica; taking it when it runs out", "holder", holder)
				waiting = holder
			}
		}
		wait := e.o.RetryPeriod
		if expiry, seen := e.expiry(); seen && !expiry.IsZero() {
			if d := expiry.Sub(e.clk.Now()); d > 0 && (d < wait || e.watching.Load()) {
				wait = d
			}
		}
		timer := e.clk.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return resourcelock.LeaderElectionRecord{}, false
		case <-timer.C():
		case <-e.changed:
			timer.Stop()
		}
	}
}

// tryAcquire reads the lease and takes it if it is missing, free or
// expired. It returns the record written and the holder of the lease now.
func (e *Elector) tryAcquire(ctx context.Context) (resourcelock.LeaderElectionRecord, string, error) {
	start := metav1.NewTime(e.clk.Now())
	me := e.o.Lock.Identity()
	next := resourcelock.LeaderElectionRecord{
		HolderIdentity:       me,
		LeaseDurationSeconds: int(e.o.LeaseDuration / time.Second),
		AcquireTime:          start,
		RenewTime:            start,
	}
	rctx, cancel := context.WithTimeout(ctx, e.o.RenewDeadline)
	defer cancel()
	rec, _, err := e.o.Lock.Get(rctx)
	switch {
	case apierrors.IsNotFound(err):
		if err := e.o.Lock.Create(rctx, next); err != nil {
			return next, "", fmt.Errorf("create the lease: %w", err)
		}
		return next, me, nil
	case err != nil:
		return next, "", fmt.Errorf("read the lease: %w", err)
	}
	e.observe(rec)
	if expiry, _ := e.expiry(); rec.HolderIdentity != "" && rec.HolderIdentity != me && expiry.After(e.clk.Now()) {
		return next, rec.HolderIdentity, nil
	}
	next.LeaderTransitions = rec.LeaderTransitions
	if rec.HolderIdentity != me {
		next.LeaderTransitions++
	}
	if err := e.o.Lock.Update(rctx, next); err != nil {
		return next, "", fmt.Errorf("take the lease from %q: %w", rec.HolderIdentity, err)
	}
	return next, me, nil
}

// lead renews the lease every retry period until ctx ends (nil), or until no
// renewal succeeded for the renew deadline or another replica holds the
// lease (ErrLost).
func (e *Elector) lead(ctx context.Context, held resourcelock.LeaderElectionRecord) error {
	log := klog.FromContext(ctx)
	last := held.RenewTime.Time
	wait := e.o.RetryPeriod
	for {
		timer := e.clk.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C():
		}
		start := e.clk.Now()
		left := last.Add(e.o.RenewDeadline).Sub(start)
		if left <= 0 {
			return fmt.Errorf("%w: no renewal succeeded for %s", ErrLost, start.Sub(last).Round(time.Millisecond))
		}
		held.RenewTime = metav1.NewTime(start)
		err := e.write(ctx, left, held)
		if err == nil {
			last, wait = start, e.o.RetryPeriod
			continue
		}
		if ctx.Err() != nil {
			return nil
		}
		log.Info("Could not renew the lease; trying again", "err", err.Error(), "left", left)
		// Read it again: the lock writes on the version it read last.
		rec, err := e.read(ctx, left)
		if err == nil && rec.HolderIdentity != e.o.Lock.Identity() {
			return fmt.Errorf("%w: the lease is held by %q", ErrLost, rec.HolderIdentity)
		}
		wait = min(e.o.RetryPeriod/4, left)
	}
}

// write updates the lease with rec within left.
func (e *Elector) write(ctx context.Context, left time.Duration, rec resourcelock.LeaderElectionRecord) error {
	rctx, cancel := context.WithTimeout(ctx, left)
	defer cancel()
	return e.o.Lock.Update(rctx, rec)
}

// read reads the lease within left and observes it.
func (e *Elector) read(ctx context.Context, left time.Duration) (*resourcelock.LeaderElectionRecord, error) {
	rctx, cancel := context.WithTimeout(ctx, left)
	defer cancel()
	rec, _, err := e.o.Lock.Get(rctx)
	if err != nil {
		return nil, err
	}
	e.observe(rec)
	return rec, nil
}

// release gives the lease back: a record with no holder, lasting a second,
// written only if the lease still names this replica.
func (e *Elector) release(ctx context.Context) {
	log := klog.FromContext(ctx)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.o.RenewDeadline)
	defer cancel()
	rec, _, err := e.o.Lock.Get(rctx)
	if err != nil || rec == nil || rec.HolderIdentity != e.o.Lock.Identity() {
		return
	}
	now := metav1.NewTime(e.clk.Now())
	if err := e.o.Lock.Update(rctx, resourcelock.LeaderElectionRecord{
		LeaderTransitions: rec.LeaderTransitions, LeaseDurationSeconds: 1, RenewTime: now, AcquireTime: now,
	}); err != nil {
		log.Error(err, "Could not give the lease back; the next leader waits for it to run out")
		return
	}
	log.Info("Gave the lease back")
}

// ForLease is the Elector of the fenced lease that fence.NewLeaseLock(cfg,
// o) returned, with the durations of pkg/util/fence. It watches the Lease
// through a client of its own, without the lock's request timeout, which
// would cut the watch.
func ForLease(cfg *rest.Config, lock *fence.Lock, o fence.LeaseOptions) (*Elector, error) {
	wcfg := rest.CopyConfig(cfg)
	wcfg.UserAgent = o.UserAgent
	wcfg.Timeout = 0
	leases, err := coordinationv1client.NewForConfig(wcfg)
	if err != nil {
		return nil, fmt.Errorf("leader election: %w", err)
	}
	return New(Options{
		Lock: lock, LeaseDuration: o.Duration,
		RenewDeadline: fence.RenewDeadline(o.Duration), RetryPeriod: fence.RetryPeriod(o.Duration),
		Leases: leases, Namespace: o.Namespace, Name: o.Name,
	})
}

// Options are the options the Elector runs with.
func (e *Elector) Options() Options { return e.o }
