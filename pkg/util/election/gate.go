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
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// gate counts the gated runnables running, so that the lease is given back
// only after the last of them returned.
type gate struct {
	mu      sync.Mutex
	closed  bool
	running sync.WaitGroup
}

// enter reports whether a gated runnable may start (the gate is open).
func (g *gate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.running.Add(1)
	return true
}

func (g *gate) leave() { g.running.Done() }

// close lets no gated runnable start any more.
func (g *gate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// wait returns once every gated runnable that started has returned.
func (g *gate) wait() { g.running.Wait() }

// gated runs a leader's runnable once its replica is elected.
type gated struct {
	e *Elector
	r manager.Runnable
}

var _ manager.LeaderElectionRunnable = gated{}

// NeedLeaderElection is false: the runnable waits for the Elector instead.
func (gated) NeedLeaderElection() bool { return false }

func (g gated) Start(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case <-g.e.elected:
	}
	if !g.e.gate.enter() {
		return nil
	}
	defer g.e.gate.leave()
	return g.r.Start(ctx)
}

// Gate runs r only once this replica leads.
func (e *Elector) Gate(r manager.Runnable) manager.Runnable { return gated{e: e, r: r} }

// Manager is a controller-runtime manager whose leader's runnables wait for
// an Elector: its Add gates every runnable the manager would have run only
// on the leader (controllers among them), and adds the rest as they are.
type Manager struct {
	manager.Manager
	e *Elector
}

// Wrap returns mgr with its leader's runnables gated by e, and adds e to
// it. mgr must have been built without leader election of its own.
func Wrap(mgr manager.Manager, e *Elector) (*Manager, error) {
	if err := mgr.Add(e); err != nil {
		return nil, err
	}
	return &Manager{Manager: mgr, e: e}, nil
}

// Add adds r, gated when it needs the leader.
func (m *Manager) Add(r manager.Runnable) error {
	if NeedsLeader(r) {
		r = m.e.Gate(r)
	}
	return m.Manager.Add(r)
}

// Elector is the manager's elector.
func (m *Manager) Elector() *Elector { return m.e }

// NeedsLeader reports whether a controller-runtime manager would run r only
// on the leader, by the rules of its runnable groups: its HTTP servers when
// they ask to, never caches or webhook servers, and any other runnable
// unless it says it does not need leader election.
func NeedsLeader(r manager.Runnable) bool {
	switch r := r.(type) {
	case *manager.Server:
		return r.NeedLeaderElection()
	case interface{ GetCache() cache.Cache }:
		return false
	case webhook.Server:
		return false
	case manager.LeaderElectionRunnable:
		return r.NeedLeaderElection()
	default:
		return true
	}
}
