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

package visibility

import (
	"context"

	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
)

// Scope is what a request lists: the units of a queue or of a quota.
type Scope struct {
	// Resource is visibilityv1alpha1.ResourceQueues or ResourceElasticQuotas.
	Resource string
	// Name of the queue or quota.
	Name string
}

// Source is what the server reads. Implementations read memory only; they
// never call the API server.
type Source interface {
	// Units returns the units of scope in phase, pending units in scheduling
	// order with their position. Message may be left empty: Explain fills it
	// for the page that is returned. found is false when the queue or quota
	// does not exist.
	Units(ctx context.Context, scope Scope, phase string) (items []visibilityv1alpha1.QueueUnitSummary, found bool, err error)
	// Explain fills in why each unit waits, where it is not known yet.
	Explain(ctx context.Context, items []visibilityv1alpha1.QueueUnitSummary)
	// Quotas lists every quota of the scheduler's quota tree, by name, with
	// its usage and the units of it and of the quotas below it.
	Quotas(ctx context.Context) ([]visibilityv1alpha1.Quota, error)
}

// Replica is what a Source may tell about the replica whose memory it reads.
// When the Source implements it, the server answers 503 ServiceUnavailable
// until Unsynced is empty (rather than lists that are merely incomplete), and
// a follower's answers carry a warning (FollowerWarning).
type Replica interface {
	// Leading is false on a follower, and on a leader still reading its caches.
	Leading() bool
	// Unsynced names what the replica has not read in full yet.
	Unsynced() []string
}
