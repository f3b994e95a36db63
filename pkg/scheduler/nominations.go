package scheduler

// nominations are the units waiting for their victims to give quota back, by
// unit and by cohort. The owner (Scheduler) guards them with s.mu.
type nominations struct {
	byUnit   map[string]string
	byCohort map[string]map[string]struct{}
}

func newNominations() nominations {
	return nominations{byUnit: map[string]string{}, byCohort: map[string]map[string]struct{}{}}
}

// add nominates unit key in cohort.
func (n *nominations) add(key, cohort string) {
	if old, ok := n.byUnit[key]; ok {
		if old == cohort {
			return
		}
		n.remove(key)
	}
	n.byUnit[key] = cohort
	if n.byCohort[cohort] == nil {
		n.byCohort[cohort] = map[string]struct{}{}
	}
	n.byCohort[cohort][key] = struct{}{}
}

// remove drops unit key's nomination, if any.
func (n *nominations) remove(key string) {
	cohort, ok := n.byUnit[key]
	if !ok {
		return
	}
	delete(n.byUnit, key)
	if set := n.byCohort[cohort]; set != nil {
		delete(set, key)
		if len(set) == 0 {
			delete(n.byCohort, cohort)
		}
	}
}

// other returns a unit nominated in cohort other than key, or "".
func (n *nominations) other(cohort, key string) string {
	for k := range n.byCohort[cohort] {
		if k != key {
			return k
		}
	}
	return ""
}
