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

package schedtypes

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Unit is one pending QueueUnit as the queues and a sort function see it.
type Unit struct {
	Key       UnitKey
	Namespace string
	Name      string
	Priority  int32
	Created   time.Time
	// Quota pays for the unit; Cohort is the top-level quota above it.
	Quota  QuotaName
	Cohort CohortName
	// Request is what the unit asks for in all.
	Request Resources
	// Enqueued is when the queue first saw the unit (for wait-time metrics).
	Enqueued time.Time
	// WaitingSince is when the unit's current wait began, as the caller reads
	// it from the API (so it survives a restart); the queue's MaxWait counts
	// from it. Zero: unknown, never starving.
	WaitingSince time.Time
	// Object is the caller's own data about the unit; the queue never reads it.
	Object any

	// Pending is the queue's record of the unit's last attempt. Only
	// pkg/queue writes it; a sort function must not read it.
	Pending PendingState
}

// PendingState is the pending queue's record of one unit's last attempt.
type PendingState struct {
	// Failure is the unit's last result, nil when it was never tried or
	// changed since.
	Failure *Failure
	// Epoch is the cohort epoch at which it failed.
	Epoch uint64
	// Beside is the room held in the unit's cohort for waiting units of
	// higher priority, set just before the unit is tried: it is admitted
	// only if it fits beside that room.
	Beside []Reservation
	// FreedBase, TakenBase and Priority are, for a failure with a Lack, the
	// room its cohort had given back, and that admissions had taken there,
	// of the lacking resource when it was tried (running sums), and the
	// unit's priority then.
	FreedBase, TakenBase int64
	Priority             int32
	// Walk is what a walk of the queue past the unit reads of Failure, set
	// with it: kept in the unit, it is read with no pointer followed.
	Walk WalkState
}

// WalkState is a unit's last Failure as a walk of its queue reads it. The
// zero value is a unit worth a try in every pass: never tried, changed
// since, or held back until the next pass.
type WalkState struct {
	// Waits: the failure waits for something to happen before the unit
	// is worth a try again; Blocking, NeverFits and HeldBack are the
	// failure's.
	Waits, Blocking, NeverFits, HeldBack bool
	// ForRoom: the failure names the room it lacks, Lack (its
	// Recheck.Lack), with Preempt its Recheck.Preempt and Reserves its own.
	ForRoom, Preempt, Reserves bool
	Lack                       Lack
}

// WalkStateOf is what a walk reads of f.
func WalkStateOf(f *Failure) WalkState {
	if f == nil || (f.HeldBack && !f.UntilCohortChanges) {
		return WalkState{}
	}
	w := WalkState{Waits: true, Blocking: f.Blocking, NeverFits: f.NeverFits, HeldBack: f.HeldBack}
	if f.Recheck != nil && f.Recheck.Lack != nil {
		w.ForRoom, w.Preempt, w.Reserves, w.Lack = true, f.Recheck.Preempt, f.Reserves, *f.Recheck.Lack
	}
	return w
}

// Failure is why a unit was not admitted.
type Failure struct {
	// Reason is what the unit waits for: the same Reason means it waits for
	// the same thing.
	Reason Reason
	// Message is for people: which quota, which resource, how much is missing.
	Message string
	// NeverFits is true when waiting cannot help; such a unit blocks nothing.
	NeverFits bool
	// Blocking is true when the unit holds back later units of its quota
	// (Block policy and Intelligent's high band).
	Blocking bool
	// HeldBack is true when the unit was not tried: a blocking unit of higher
	// rank waits on its quota, the queue waits for pods to run, or the pass
	// did not reach it (max-depth). It is tried again in every pass (unless
	// UntilCohortChanges); its wait is reported, but not as an attempt.
	HeldBack bool
	// UntilCohortChanges makes a held-back unit wait, like a refused one,
	// until its cohort's epoch moves (Freed) or everything is invalidated.
	UntilCohortChanges bool
	// Preempting is true when the unit waits for victims to give back quota:
	// it blocks lower units of its quota whatever the policy, so the room
	// being made is not taken by others.
	Preempting bool
	// Inferred is set by the caller when the answer was taken from another
	// unit's refusal in the same pass, so Message may carry that unit's
	// numbers; the queue does not read it.
	Inferred bool
	// Covering is set by the caller when, for the rest of the pass, every
	// unit of the same queue and quota asking at least as much of every
	// resource, at no higher priority, would be refused the same way. When
	// the queue is ordered by priority first and all its units qualify, the
	// pass stops trying the queue.
	Covering bool
	// Stale is set by the caller for an entry whose unit was admitted or
	// changed meanwhile: it is dropped, never reported.
	Stale bool
	// Reserves is set by the caller when the unit waits for room that lower
	// priority units hold or could take: it could fit once they finish. The
	// queue then may hold its request in its cohort (see Reservation).
	Reserves bool
	// Recheck, set by the caller on a refusal for want of quota with no
	// unit to evict, lets the next try confirm the refusal without a filter
	// or a victim search while nothing it depended on changed (see
	// framework.RefusalChecker).
	Recheck *Recheck
	// Confirmed is set by the caller when the failure is the unit's last
	// one, confirmed through Recheck: there is nothing new to tell.
	Confirmed bool
}

// Recheck is what a refusal for want of quota depended on beyond the room
// itself, as the plugin that refused it counts changes.
type Recheck struct {
	Quota    QuotaName
	Priority int32
	// Preempt is whether the unit's queue let it preempt then.
	Preempt bool
	// Shape and Changes are the plugin's counts of changes to the quota
	// tree's shape and to what units of Quota hold.
	Shape, Changes uint64
	// Lack, when set, is what only freed room can answer: the unit may not
	// reclaim, so it fits again only once its cohort gives back at least
	// Lack, units of Quota give back anything, or (when Preempt) a unit of
	// lower priority comes to hold quota in Quota.
	Lack *Lack
}

// Lack is how much of one resource a refused unit is short of, at the quota
// (its own or an ancestor) that refused it.
type Lack struct {
	Resource corev1.ResourceName
	Amount   int64
	// Root: the quota that refused it is its cohort's top, limited by its
	// max alone (no quota of the tree keeps its min from others), so room
	// that admissions in the cohort took since counts against room given
	// back.
	Root bool
}

// Less orders units inside a queue: true when a goes first.
type Less func(a, b *Unit) bool
