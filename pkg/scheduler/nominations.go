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

import "github.com/koordinator-sh/koord-queue/pkg/schedtypes"

// nominations are the units waiting for their victims to give quota back, by
// unit and by cohort. Their owner, the preemptor, guards them with its lock.
type nominations struct {
	byUnit map[schedtypes.UnitKey]schedtypes.CohortName
	// byCohort holds each nomination's number: nominations are numbered
	// in the order they were made.
	byCohort map[schedtypes.CohortName]map[schedtypes.UnitKey]uint64
	made     uint64
}

func newNominations() nominations {
	return nominations{byUnit: map[schedtypes.UnitKey]schedtypes.CohortName{}, byCohort: map[schedtypes.CohortName]map[schedtypes.UnitKey]uint64{}}
}

// add nominates unit key in cohort.
func (n *nominations) add(key schedtypes.UnitKey, cohort schedtypes.CohortName) {
	if old, ok := n.byUnit[key]; ok {
		if old == cohort {
			return
		}
		n.remove(key)
	}
	n.byUnit[key] = cohort
	if n.byCohort[cohort] == nil {
		n.byCohort[cohort] = map[schedtypes.UnitKey]uint64{}
	}
	n.made++
	n.byCohort[cohort][key] = n.made
}

// remove drops unit key's nomination, if any, and returns its cohort ("" when
// it had none).
func (n *nominations) remove(key schedtypes.UnitKey) schedtypes.CohortName {
	cohort, ok := n.byUnit[key]
	if !ok {
		return ""
	}
	delete(n.byUnit, key)
	if set := n.byCohort[cohort]; set != nil {
		delete(set, key)
		if len(set) == 0 {
			delete(n.byCohort, cohort)
		}
	}
	return cohort
}

// other returns the unit nominated first in cohort other than key, or "":
// the same one until it leaves, so that what a unit paused for it is told
// names it until then.
func (n *nominations) other(cohort schedtypes.CohortName, key schedtypes.UnitKey) schedtypes.UnitKey {
	set := n.byCohort[cohort]
	// Most passes ask for cohorts with no nomination, or only the asker's:
	// answer those without starting a map iteration.
	if len(set) == 0 {
		return ""
	}
	if _, self := set[key]; self && len(set) == 1 {
		return ""
	}
	var first schedtypes.UnitKey
	var at uint64
	for k, made := range set {
		if k != key && (first == "" || made < at) {
			first, at = k, made
		}
	}
	return first
}
