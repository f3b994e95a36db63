package schedtypes

import "time"

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
}

// Info is a read-only view of one quota.
type Info struct {
	Name, Parent QuotaName
	Exists       bool
	Min, Max     Resources
	Used         Resources
	Children     []QuotaName
}
