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

// Reservation is room held in a cohort for a waiting unit that does not fit
// yet but could once units of lower priority finish: a unit of the same
// cohort with a lower priority is admitted only if it fits beside it (see
// docs/protocol.md, "Room held for a waiting unit").
type Reservation struct {
	Unit     UnitKey
	Priority int32
	// Quota is the waiting unit's quota: the room is held there and at each
	// of its ancestors.
	Quota   QuotaName
	Request Resources
}
