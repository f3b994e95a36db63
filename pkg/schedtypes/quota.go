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

	"k8s.io/apimachinery/pkg/types"
)

// Holding is one admitted unit as usage accounting and victim selection see
// it.
type Holding struct {
	Key         UnitKey
	Quota       QuotaName
	Priority    int32
	AllocatedAt time.Time
	Used        Resources
	// Evicting is true once the unit was chosen as a victim and has not yet
	// given its quota back.
	Evicting bool
	// Consumer is the UID of the unit's job (spec.consumerRef.uid): its
	// pods that do not name the unit (started before the label existed,
	// as under Koord-Queue v1.8) are matched by their controller's UID.
	Consumer types.UID
}

// Victims is the answer of a search for units to evict.
type Victims struct {
	// Units to evict, in the order they were chosen.
	Units []Holding
	// Waiting is true when units already evicting will free enough: nothing
	// more needs to go.
	Waiting bool
	// Reclaim is true when the victims were chosen by reclaim.
	Reclaim bool
	// RetryAt, when no victims were found, is the earliest end of a
	// protection period that kept a candidate out: the search is worth
	// repeating then, even if nothing else changes. Zero when none did.
	RetryAt time.Time
	// Protected, when no victims were found because of protection periods,
	// are the units that will be evicted at FreeAt, the first end of a
	// protection period at which victims are found, if nothing else changes
	// (Reclaim says whether by reclaim). The waiting unit names them.
	Protected []Holding
	FreeAt    time.Time
	// Reachable, when no victims were found, is true when the unit would fit
	// once the admitted units of lower priority in its cohort had given back
	// what they hold: waiting can help it, so it may hold room (see
	// Reservation).
	Reachable bool
	// Partial is true when a search left out candidates that may become
	// victims later without anything else changing (units whose admission
	// is being written): a refusal it led to is not rechecked cheaply.
	Partial bool
}

// Info is a read-only view of one quota.
type Info struct {
	Name, Parent QuotaName
	Exists       bool
	Min, Max     Resources
	// Used is what the quota and its descendants use; Foreign is the part
	// of it that pods koord-queue does not manage use.
	Used, Foreign Resources
	Children      []QuotaName
	// IsParent is true for a quota marked is-parent or with children: no
	// unit is admitted to it.
	IsParent bool
	// NoLend is true when the quota keeps its unused min from others.
	NoLend bool
}
