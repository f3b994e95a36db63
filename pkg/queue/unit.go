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

package queue

import (
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// The values the queues exchange live in pkg/schedtypes, so that the plugin
// API need not import this package; these names keep its callers unchanged.
type (
	// Unit is what the queue knows of one pending QueueUnit (see
	// schedtypes.Unit); its Pending field is this package's own.
	Unit = schedtypes.Unit
	// Failure is why a unit was not admitted (see schedtypes.Failure).
	Failure = schedtypes.Failure
	// Less orders units inside a queue: true when a goes first.
	Less = schedtypes.Less
	// QueueName names a queue (see schedtypes.QueueName).
	QueueName = schedtypes.QueueName
	// QuotaName names a quota (see schedtypes.QuotaName).
	QuotaName = schedtypes.QuotaName
	// CohortName names a cohort (see schedtypes.CohortName).
	CohortName = schedtypes.CohortName
	// UnitKey names a unit (see schedtypes.UnitKey).
	UnitKey = schedtypes.UnitKey
)

// DefaultLess is priority descending, then creation time ascending, then
// namespace and name.
func DefaultLess(a, b *Unit) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if !a.Created.Equal(b.Created) {
		return a.Created.Before(b.Created)
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}
