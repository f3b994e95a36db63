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

package framework

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// UnitInfo is one QueueUnit as plugins see it in a scheduling attempt.
type UnitInfo struct {
	Key   schedtypes.UnitKey
	Unit  *schedv1alpha1.QueueUnit
	Queue schedtypes.QueueName
	Quota schedtypes.QuotaName
	// Request is the unit's whole demand.
	Request schedtypes.Resources
	// Priority of the unit inside its queue.
	Priority int32
	// Beside is the room held in the unit's cohort for waiting units of
	// higher priority (see schedtypes.Reservation): a filter that keeps
	// quota counts it as used, and refuses with a reason of kind
	// schedtypes.WaitRoomHeld when only that room is missing.
	Beside []schedtypes.Reservation
}

// Plugin is what every plugin is.
type Plugin interface {
	Name() string
}

// SortUnit is what a QueueSortPlugin sees of a pending unit: who it is and
// what ranks it, not the queue's record of its attempts.
type SortUnit struct {
	Namespace, Name string
	Priority        int32
	Created         time.Time
	Quota           schedtypes.QuotaName
}

// QueueSortPlugin orders units inside a queue. At most one may be enabled;
// without one, units go by priority (higher first), then creation time.
type QueueSortPlugin interface {
	Plugin
	Less(a, b SortUnit) bool
}

// PriorityMajorSorter is a QueueSortPlugin that can say its Less orders by
// priority (higher first) before anything else. When PriorityMajor is true,
// the scheduler knows no unit after a position in a queue outranks it, so a
// pass stops trying a queue once every unit left is refused the same way
// (an early stop that spares Filter calls); the order itself is unchanged.
// A sort plugin that does not implement it, or answers false, is tried to
// the end of each queue.
type PriorityMajorSorter interface {
	QueueSortPlugin
	PriorityMajor() bool
}

// QueueMapPlugin tells which queue holds a unit and which quota pays for it.
// Exactly one is used.
type QueueMapPlugin interface {
	Plugin
	Map(u *schedv1alpha1.QueueUnit) (queueName schedtypes.QueueName, quotaName schedtypes.QuotaName)
	// Cohort is the group of quotas whose freed capacity can help quotaName.
	Cohort(quotaName schedtypes.QuotaName) schedtypes.CohortName
}

// FilterPlugin decides whether a unit may be admitted now. A filter must be
// monotone in the request: when it refuses a unit, it refuses a unit of the
// same quota and queue that asks at least as much of every resource, until
// usage drops. A pass relies on this to skip such units (see the scheduler's
// shortfalls).
type FilterPlugin interface {
	Plugin
	Filter(ctx context.Context, u *UnitInfo) *Status
}

// ReservePlugin takes what an admitted unit needs, before its status is
// written; Unreserve gives it back when the write fails.
type ReservePlugin interface {
	Plugin
	Reserve(ctx context.Context, u *UnitInfo) *Status
	Unreserve(ctx context.Context, u *UnitInfo)
}

// UsagePlugin learns what each unit really holds, as read from the API: the
// source of truth after a restart and after every change.
type UsagePlugin interface {
	Plugin
	// SetUsage sets what unit key holds (nil or zero usage: nothing).
	SetUsage(key schedtypes.UnitKey, h *schedtypes.Holding)
}

// GoneUsagePlugin is a UsagePlugin that learns when a unit is gone from the
// API, not merely holding nothing: it may keep charging what the unit held
// while the unit's pods are still there (docs/protocol.md, "Deletion").
// A usage plugin without this power is told SetUsage(key, nil).
type GoneUsagePlugin interface {
	UsagePlugin
	// UnitGone tells that unit key was deleted from the API.
	UnitGone(key schedtypes.UnitKey)
}

// PreemptPlugin finds admitted units whose eviction would let a unit that
// did not fit be admitted. At most one may be enabled: two would choose
// victims for the same room.
type PreemptPlugin interface {
	Plugin
	// Preempt returns the victims, or Waiting when units already evicting
	// will free enough, or, when there are none yet, RetryAt: when a
	// protection period that kept candidates out ends. preempt allows
	// evicting lower-priority units of the unit's own quota; reclaim allows
	// taking back what other quotas borrow. Units for which skip is true are
	// never chosen.
	Preempt(ctx context.Context, u *UnitInfo, preempt, reclaim bool, skip func(key schedtypes.UnitKey) bool) schedtypes.Victims
	// WouldBorrow reports whether admitting u would take its quota above its
	// min. While room is being made for a nominated unit, units that would
	// borrow wait, so they do not take that room.
	WouldBorrow(u *UnitInfo) bool
}

// RefusalChecker is a PreemptPlugin that can confirm a refusal cheaply: a
// unit refused for want of quota, whose victim search found nobody (with
// nobody left out and no protection period to wait for), stays refused while
// its request still does not fit, for the same reason, nothing that units of
// its own quota hold changed (no new victim in its quota) and it could not
// reclaim. After a release every queue of the cohort is worth a look; this
// keeps that look O(1) for the heads that the freed room does not help.
type RefusalChecker interface {
	// RefusalMark is the Recheck of a refusal of u decided now, in a queue
	// that may preempt or not; reclaim says whether units may reclaim (a
	// unit that may is given no Lack).
	RefusalMark(u *UnitInfo, preempt, reclaim bool) *schedtypes.Recheck
	// StillRefused returns the Recheck of u, refused with reason under mark,
	// when it is refused the same way now (with its Lack as of now), nil
	// otherwise; reclaim says whether it may reclaim. A unit that may
	// preempt is not refused the same way once the room it misses is no
	// more than its victims could give back.
	StillRefused(u *UnitInfo, mark *schedtypes.Recheck, reason schedtypes.Reason, reclaim bool) *schedtypes.Recheck
}

// Runnable is a plugin with work of its own; Start blocks until ctx ends. It
// runs only on the leader.
type Runnable interface {
	Start(ctx context.Context) error
}

// Syncer is a plugin with informers of its own: the scheduler admits nothing
// before HasSynced is true, so limits and usage are complete.
type Syncer interface {
	HasSynced() bool
}

// SharePlugin orders queues of equal priority by fair share: Share says how
// far a quota is into its share of what it may borrow (lower is further
// below, served first). At most one may be enabled: the queues have one
// order.
type SharePlugin interface {
	Share(quotaName schedtypes.QuotaName) float64
	// Sharing reports whether fair sharing is asked for at all; while it is
	// not, queues of equal priority take turns.
	Sharing() bool
	// BelowMin reports whether a quota uses less than its min of some
	// resource; while queues take turns, such quotas' queues go first.
	BelowMin(quotaName schedtypes.QuotaName) bool
}

// QuotaLister is a plugin that can list its quotas with their usage (for
// metrics and debugging). At most one may be enabled: metrics and the debug
// API name quotas by name alone, so two lists could not be told apart.
type QuotaLister interface {
	ListQuotas() []schedtypes.Info
}

// Handle is what plugins get from the scheduler: shared services, never a
// plugin's settings (those are its own arguments, see Factory).
type Handle interface {
	Client() client.Client
	Cache() cache.Cache
	Recorder() record.EventRecorder
	// Freed says capacity was freed in a cohort, in an amount not counted:
	// its waiting units are tried again.
	Freed(cohort schedtypes.CohortName)
	// FreedRoom says at most amount was given back in a cohort: its units
	// refused for want of room are tried again once what was given back
	// since covers what they lacked (schedtypes.Recheck's Lack), the others
	// now.
	FreedRoom(cohort schedtypes.CohortName, amount schedtypes.Resources)
	// HoldingsChanged says what the units of a quota hold changed: released
	// when one gave something back, else a unit at priority came to hold
	// more. Every change a Recheck's Changes counts must be told.
	HoldingsChanged(quota schedtypes.QuotaName, priority int32, released bool)
	// Invalidate says anything may fit now: every waiting unit is tried again.
	Invalidate()
	// Clock is the scheduler's clock.
	Clock() clock.Clock
}

// Factory builds a plugin from its arguments (pluginConfigs[].args of the
// configuration, empty when none are given). It decodes and checks them
// itself and returns an error naming what is wrong.
type Factory func(args runtime.RawExtension, h Handle) (Plugin, error)

// Registry maps plugin names to factories.
type Registry map[string]Factory
