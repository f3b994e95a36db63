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
	"sync"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"

	"github.com/koordinator-sh/koord-queue/pkg/util/mutation"
)

// Lock is a resourcelock.Interface that remembers this replica's renewals.
type Lock struct {
	resourcelock.Interface
	clock clock.PassiveClock
	// valid is how long after a renewal began writes are allowed.
	valid time.Duration

	mu sync.Mutex
	// renewed is when the last successful acquisition or renewal by this
	// replica began, or the renewTime it wrote if earlier; zero when it
	// holds no lease.
	renewed time.Time
	// read is the holder the last Get of the lease returned.
	read string
}

// New wraps lock; writes are allowed for valid after each renewal began. valid
// must be shorter than the lease duration, by at least the longest time a
// write may take to reach the API server (leader election's renew deadline
// is such a bound).
func New(lock resourcelock.Interface, valid time.Duration, clk clock.PassiveClock) *Lock {
	return &Lock{Interface: lock, clock: clk, valid: valid}
}

// Create acquires the lease for the first time.
func (l *Lock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	start := l.clock.Now()
	err := l.Interface.Create(ctx, ler)
	l.record(start, ler, err)
	return err
}

// Get reads the lease and remembers its holder (Update).
func (l *Lock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	rec, raw, err := l.Interface.Get(ctx)
	if err == nil && rec != nil {
		l.mu.Lock()
		l.read = rec.HolderIdentity
		l.mu.Unlock()
	}
	return rec, raw, err
}

// Update renews, takes over or releases the lease. A release (an empty
// holder) is written only if the lease just read names this replica: the
// leader elector releases on the holder it last observed, after a read
// whose version it then writes with, so a replica paused past its lease
// would otherwise wipe out the lease its successor has just taken, and a
// third replica could take it while the successor still leads.
func (l *Lock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	if ler.HolderIdentity == "" {
		l.mu.Lock()
		other := l.read != l.Identity()
		if other {
			l.renewed = time.Time{}
		}
		l.mu.Unlock()
		if other {
			return nil // nothing of ours to give back
		}
	}
	start := l.clock.Now()
	err := l.Interface.Update(ctx, ler)
	l.record(start, ler, err)
	return err
}

func (l *Lock) record(start time.Time, ler resourcelock.LeaderElectionRecord, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err == nil && ler.HolderIdentity == l.Identity():
		l.renewed = start
		// The elector stamps renewTime when its attempt began, which may be
		// well before this write (a slow failed update, then a read): the
		// Lease then shows others that earlier moment, so count from it.
		if at := ler.RenewTime.Time; !at.IsZero() && at.Before(start) {
			l.renewed = at
		}
	case err == nil:
		// Released (an empty holder) or handed over: no more writes.
		l.renewed = time.Time{}
	}
	// A failed renewal changes nothing: the last good one still bounds how
	// long another replica must wait.
}

// ValidUntil is the moment this replica's writes must have left by: valid
// after the start of its last renewal; zero when it holds no lease.
func (l *Lock) ValidUntil() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.renewed.IsZero() {
		return time.Time{}
	}
	return l.renewed.Add(l.valid)
}

// Allowed reports whether this replica may write now: it holds the lease
// and renewed it less than valid ago.
func (l *Lock) Allowed() bool {
	if mutation.On(mutation.NoFence) {
		return true
	}
	until := l.ValidUntil()
	return !until.IsZero() && l.clock.Now().Before(until)
}
