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

package quota

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// The values the tree exchanges live in pkg/schedtypes, so that the plugin
// API need not import this package; these names keep its callers unchanged.
type (
	// Resources maps a resource name to an amount (see schedtypes.Resources).
	Resources = schedtypes.Resources
	// Holding is one admitted unit (see schedtypes.Holding).
	Holding = schedtypes.Holding
	// Victims is the answer of SelectVictims (see schedtypes.Victims).
	Victims = schedtypes.Victims
	// Info is a read-only view of one quota (see schedtypes.Info).
	Info = schedtypes.Info
	// QuotaName names a quota (see schedtypes.QuotaName).
	QuotaName = schedtypes.QuotaName
	// CohortName names a cohort (see schedtypes.CohortName).
	CohortName = schedtypes.CohortName
	// UnitKey names a unit (see schedtypes.UnitKey).
	UnitKey = schedtypes.UnitKey
)

// FromList converts a ResourceList (see schedtypes.FromList).
func FromList(l corev1.ResourceList) Resources { return schedtypes.FromList(l) }

// FromListChecked converts a unit's ResourceList (see schedtypes.FromListChecked).
func FromListChecked(l corev1.ResourceList) (Resources, error) { return schedtypes.FromListChecked(l) }

// Quantity renders one amount as a Quantity (see schedtypes.Quantity).
func Quantity(name corev1.ResourceName, v int64) resource.Quantity {
	return schedtypes.Quantity(name, v)
}

// Format renders one amount for people (see schedtypes.Format).
func Format(name corev1.ResourceName, v int64) string { return schedtypes.Format(name, v) }
