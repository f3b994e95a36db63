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

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// maxShortfallsPerScope bounds the shapes remembered per quota and queue; a
// queue rarely holds more classes of request than this.
const maxShortfallsPerScope = 8

// shortfalls remember, for one pass, the units refused for want of room with
// no victim to evict, and those paused while room is made for a nominated
// unit (asking more borrows more). Usage only grows and victims only get fewer while a pass
// runs, so a later unit of the same quota and queue that asks at least as much
// of every resource, at no higher priority, is refused too: it is answered
// from here without a filter or a victim search. Room freed meanwhile bumps
// the cohort's epoch, so the units answered here are tried again in the next
// pass.
type shortfalls map[shortfallScope][]shortfall

type shortfallScope struct {
	quota schedtypes.QuotaName
	queue schedtypes.QueueName
}

type shortfall struct {
	// request is what the remembered unit asked, resource by resource: a
	// match looks up each in the asking unit's request, which costs less
	// than walking a map per remembered unit.
	request  []asked
	priority int32
	failure  schedtypes.Failure
	unit     schedtypes.UnitKey
	// cohort is the quota's cohort as the remembered unit saw it.
	cohort schedtypes.CohortName
}

// match returns the failure of a remembered unit that asked no more than req
// at a priority no lower than priority.
func (s shortfalls) match(quotaName schedtypes.QuotaName, queueName schedtypes.QueueName, req schedtypes.Resources, priority int32) (*shortfall, bool) {
	fs := s[shortfallScope{quotaName, queueName}]
	for i := range fs {
		if f := &fs[i]; priority <= f.priority && covers(req, f.request) {
			return f, true
		}
	}
	return nil, false
}

// asked is one resource of a request.
type asked struct {
	name   corev1.ResourceName
	amount int64
}

// covers is Resources.Covers against a request given as a slice.
func covers(req schedtypes.Resources, of []asked) bool {
	for _, a := range of {
		if req[a.name] < a.amount {
			return false
		}
	}
	return true
}

// add remembers a refusal.
func (s shortfalls) add(quotaName schedtypes.QuotaName, queueName schedtypes.QueueName, cohort schedtypes.CohortName, unit schedtypes.UnitKey, req schedtypes.Resources, priority int32, f *schedtypes.Failure) {
	k := shortfallScope{quotaName, queueName}
	if len(s[k]) >= maxShortfallsPerScope {
		return
	}
	of := make([]asked, 0, len(req))
	for name, amount := range req {
		of = append(of, asked{name: name, amount: amount})
	}
	s[k] = append(s[k], shortfall{request: of, priority: priority, failure: *f, unit: unit, cohort: cohort})
}
