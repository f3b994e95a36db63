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
	"maps"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// changeKind is where a QueueUnit event left a unit, as the cache saw it.
type changeKind int

const (
	// changeStale: an older version than the cache holds; nothing was
	// recorded and nobody acts.
	changeStale changeKind = iota
	// changeInFlight: recorded while an admission of the unit is being
	// written; that write's outcome decides what follows.
	changeInFlight
	// changePending: the unit waits for admission.
	changePending
	// changeAdmitted: the unit is past its admission (reserved, dequeued,
	// running or finished).
	changeAdmitted
	// changeDeleting: the unit has a deletion timestamp.
	changeDeleting
	// changeDeleted: the unit is gone from the API.
	changeDeleted
)

// unitChange is one update of the cache (observe, remove): what a QueueUnit
// event changed, which each part that follows units then acts on in its
// unitChanged (intake.apply hands it to them in turn).
type unitChange struct {
	kind changeKind
	key  schedtypes.UnitKey
	// old is the object seen before (nil: new to the scheduler); new is
	// the one seen now (nil for changeDeleted).
	old, new *schedv1alpha1.QueueUnit
	st       *unitState
	// queue and quota are the queue and quota the unit belongs to: those
	// that admitted it while it holds quota, else those its labels name;
	// relabelled is the quota its labels name instead, to report once (""
	// when nothing to report).
	queue             schedtypes.QueueName
	quota, relabelled schedtypes.QuotaName
	// wasHolding: the phase seen before held quota.
	wasHolding bool
}

// kindOf is where u is, for a unit the cache recorded and that is not
// being admitted.
func kindOf(u *schedv1alpha1.QueueUnit) changeKind {
	switch {
	case u.DeletionTimestamp != nil:
		return changeDeleting
	case queueunit.IsPending(u.Status.Phase):
		return changePending
	}
	return changeAdmitted
}

// seen reports whether the parts act on the change as on an object seen:
// recorded, and neither being admitted nor gone.
func (ch *unitChange) seen() bool {
	return ch.kind == changePending || ch.kind == changeAdmitted || ch.kind == changeDeleting
}

// created: a unit new to the scheduler that has no phase yet.
func (ch *unitChange) created() bool {
	return ch.seen() && ch.old == nil && ch.new.Status.Phase == schedv1alpha1.QueueUnitPhaseNone
}

// finished: the unit just reached a final phase.
func (ch *unitChange) finished() bool {
	return ch.seen() && ch.old != nil && queueunit.IsFinished(ch.new.Status.Phase) && !queueunit.IsFinished(ch.old.Status.Phase)
}

// released: a unit that held quota waits again.
func (ch *unitChange) released() bool { return ch.kind == changePending && ch.wasHolding }

// specChanged: the unit is new, or what orders or maps it may have changed
// (its spec or its labels).
func (ch *unitChange) specChanged() bool {
	return ch.old == nil || ch.old.Generation != ch.new.Generation || !maps.Equal(ch.old.Labels, ch.new.Labels)
}

// unitFollower is a part that acts on the units' changes.
type unitFollower interface {
	unitChanged(ch unitChange)
}
