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
	"strconv"
	"strings"
)

// WaitKind is what a waiting unit waits for. Each kind has one row in the
// wait table (Row): its condition reason, message and remedy.
type WaitKind uint8

// The kinds, in the order of the user guide's table.
const (
	// WaitOther is a refusal of a plugin that names no kind of ours.
	WaitOther WaitKind = iota
	WaitInsufficientQuota
	WaitPreempting
	WaitPreemptor
	WaitBorrowingPaused
	WaitBehind
	WaitHighBand
	WaitReserving
	WaitRoomHeld
	WaitBeyondMaxDepth
	WaitForPods
	WaitNeverFits
	WaitNoNodeFits
	WaitInvalidRequest
	WaitInvalidQuotaTree
	WaitQuotaNotFound
	WaitQuotaNotAllowed
	WaitSystemQuota
	WaitParentQuota
	WaitNoQuota
	WaitQueueNotFound
	WaitInactive
	WaitBudgetUsedUp

	waitKinds
)

// Reason says what a unit waits for, without the numbers that move while it
// waits: two equal Reasons mean the unit waits for the same thing, so its
// status is rewritten only when its Reason changes.
type Reason struct {
	Kind WaitKind
	// Subject is what the wait names first: a quota, a unit
	// (namespace/name), a queue or a pod set. Detail is a second name: a
	// resource, a namespace, a unit or what is wrong with the quota tree.
	Subject, Detail string
	// Number is part of the wait only where a changed value is another wait:
	// the request of a unit that never fits.
	Number int64
	// ProtectedUntil (Unix seconds; 0: not protected) is when the protection
	// of the units that will make room for it ends.
	ProtectedUntil int64
	// Reserving is set when the unit waited longer than its queue's max-wait
	// and keeps later units of its quota waiting.
	Reserving bool
}

// WaitRow is what users see of one kind of wait.
type WaitRow struct {
	// Key names the kind in logs.
	Key string
	// Condition is the reason of the unit's condition QuotaReserved=False.
	Condition string
	// Message is what status.message reads (placeholders in capitals).
	Message string
	// Remedy is what the user can do about it.
	Remedy string
}

var waitRows = [waitKinds]WaitRow{
	WaitOther: {"other", "Pending", "the text of the plugin that refused the unit",
		"See the documentation of that plugin."},
	WaitInsufficientQuota: {"short", "InsufficientQuota", "`insufficient quota: quota Q has F R free (used U, min M, max X), the unit requests N R: K more R needed` (`quota P, an ancestor of quota Q, has ...` when a parent is short)",
		"Wait for running jobs of that quota to finish, or raise its max."},
	WaitPreempting: {"preempting", "Preempting", "`preempting N unit(s) (...) to make room in quota Q; ...` or `waiting for preempted units to give back quota Q; ...`",
		"Nothing: the victims' pods are stopping."},
	WaitPreemptor: {"preemptor", "RoomBeingMade", "`held back: room is being made in quota Q by preemption for NS/NAME ...`",
		"Wait for that preemptor to be admitted."},
	WaitBorrowingPaused: {"borrowing-paused", "RoomBeingMade", "`held back: room is being made by preemption for NS/NAME, and quota Q would borrow above its min meanwhile; ...`",
		"Wait for that preemptor to be admitted."},
	WaitBehind: {"behind", "WaitingInLine", "`waiting behind NS/NAME, the unit directly ahead of it in quota Q of Block queue ...` (or among an Intelligent queue's high band)",
		"Look at NS/NAME: it goes first."},
	WaitHighBand: {"highband", "HighBandWaiting", "`held back: high-band unit NS/NAME (priority N, koord-queue/priority-threshold T) of Intelligent queue ... waits for quota Q; low-band units may not take its room`",
		"Wait for the high band, or raise this unit's priority."},
	WaitReserving: {"reserving", "QuotaReservedByMaxWait", "`held back: NS/NAME has waited longer than koord-queue/max-wait D and reserves quota Q; ...`",
		"Wait for that unit."},
	WaitRoomHeld: {"held", "RoomHeldForHigherPriority", "`waits behind NS/NAME (priority P, quota Q, requests N R), for which room is held: quota C has F R free (used U, max X), of which H held for it; the unit requests M R`",
		"Nothing: the queue of NS/NAME holds room for higher priority (`koord-queue/hold-room-for-higher-priority`); NS/NAME goes first, then this unit gets the room left."},
	WaitBeyondMaxDepth: {"depth", "BeyondMaxDepth", "`waiting in queue Q: not examined yet, as each pass looks at the first M units of the queue (koord-queue/max-depth); ...`",
		"Wait, or raise `koord-queue/max-depth`."},
	WaitForPods: {"waitforpods", "WaitingForPodsRunning", "`waiting in queue Q: it admits its next unit once the pods of the unit it admitted last are running (koord-queue/wait-for-pods-running)`",
		"Wait, or remove the annotation."},
	WaitNeverFits: {"never", "NeverFits", "`can never fit: quota Q allows at most X R, the unit requests N`",
		"Shrink the job or raise the max."},
	WaitNoNodeFits: {"nodefit", "NoNodeFits", "`can never fit on any node: ...`",
		"Check requests, node selectors, tolerations; or `--node-fit-check=false`."},
	WaitInvalidRequest: {"invalidrequest", "InvalidRequest", "`never fits: invalid request: ...`",
		"Fix the hand-written unit."},
	WaitInvalidQuotaTree: {"tree", "InvalidQuotaTree", "`invalid quota tree: the parent P of quota Q does not exist ...` (or `would make a cycle`)",
		"Fix the `parent` labels."},
	WaitQuotaNotFound: {"notfound", "QuotaNotFound", "`ElasticQuota Q not found`",
		"Create the quota."},
	WaitQuotaNotAllowed: {"tenancy", "QuotaNotAllowed", "`namespace NS may not use quota Q ...`",
		"List NS in the quota's `quota.scheduling.koordinator.sh/namespaces`."},
	WaitSystemQuota: {"system", "SystemQuota", "`quota Q is one of Koordinator's own quotas ...`",
		"Label the job with one of your leaf quotas."},
	WaitParentQuota: {"parent", "ParentQuota", "`quota Q is a parent quota ...`",
		"Label the job with a leaf quota (one no other quota names as its parent)."},
	WaitNoQuota: {"noquota", "NoQuota", "`no quota: the unit names no ElasticQuota ...`",
		"Label the job, or set `--default-quota`."},
	WaitQueueNotFound: {"queuenotfound", "QueueNotFound", "`queue Q not found: the unit is admitted as soon as it exists`",
		"Create the quota (its Queue follows)."},
	WaitInactive: {"inactive", "Inactive", "`inactive: spec.active is false; ...`",
		"Set `spec.active` back to true."},
	WaitBudgetUsedUp: {"budget", "ExecutionBudgetUsedUp", "`execution budget used up: raise spec.maximumExecutionTimeSeconds to run it again`",
		"Raise the budget."},
}

// protectedRow is the row of any wait whose room is made by units still
// protected (Reason.ProtectedUntil): what it waits for then is the end of
// the protection.
var protectedRow = WaitRow{"protected", "WaitingForProtectionEnd", "the above, then `; room will be reclaimed from the quotas that borrow above their min: NS/NAME (quota B), ..., protected until T (reclaimProtectionPeriod)` (`room will be preempted` inside its own quota)",
	"Nothing: at T those units are evicted for it."}

// Row is what users see of r.
func (r Reason) Row() WaitRow {
	if r.ProtectedUntil != 0 {
		return protectedRow
	}
	if r.Kind >= waitKinds {
		return waitRows[WaitOther]
	}
	return waitRows[r.Kind]
}

// Condition is the reason of the unit's condition QuotaReserved=False.
func (r Reason) Condition() string { return r.Row().Condition }

// Protected is r while the units that will make room for it are protected
// until at (Unix seconds).
func (r Reason) Protected(at int64) Reason {
	r.ProtectedUntil = at
	return r
}

// String renders r for logs: the kind's key, then the names and numbers.
func (r Reason) String() string {
	var b strings.Builder
	b.WriteString(r.Kind.Key())
	for _, s := range []string{r.Subject, r.Detail} {
		if s != "" {
			b.WriteString("/" + s)
		}
	}
	if r.Number != 0 {
		b.WriteString("/" + strconv.FormatInt(r.Number, 10))
	}
	if r.Reserving {
		b.WriteString("/reserving")
	}
	if r.ProtectedUntil != 0 {
		b.WriteString("/protected/" + strconv.FormatInt(r.ProtectedUntil, 10))
	}
	return b.String()
}

// Key names the kind in logs.
func (k WaitKind) Key() string { return Reason{Kind: k}.Row().Key }

// WaitTable is every row users may see, in the order of the user guide's
// table: each kind's, the protected wait after InsufficientQuota, and
// WaitOther last.
func WaitTable() []WaitRow {
	rows := []WaitRow{waitRows[WaitInsufficientQuota], protectedRow}
	rows = append(rows, waitRows[WaitInsufficientQuota+1:]...)
	return append(rows, waitRows[WaitOther])
}
