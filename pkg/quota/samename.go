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
	"maps"
	"slices"

	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
)

// SameNames keeps every ElasticQuota seen by name and namespace. Quota
// names are cluster-wide (a job names its quota without a namespace, and
// koord-manager's webhook refuses a second quota of a name): when two
// namespaces hold one name anyway, the oldest counts (of two created in the
// same second, the one seen first) and the others are reported and
// ignored. Not safe for concurrent use: the ElasticQuota plugin and the
// controller of their Queues (pkg/quotaqueues) each keep one, fed by the same informer, so both
// follow the same quota of a name.
type SameNames struct {
	byName map[string]map[string]seenQuota
	seen   uint64
}

type seenQuota struct {
	eq *eqv1alpha1.ElasticQuota
	// order is when it was first seen.
	order uint64
}

func NewSameNames() *SameNames {
	return &SameNames{byName: map[string]map[string]seenQuota{}}
}

// Add records eq and returns the quota of its name that counts.
func (s *SameNames) Add(eq *eqv1alpha1.ElasticQuota) *eqv1alpha1.ElasticQuota {
	byNS := s.byName[eq.Name]
	if byNS == nil {
		byNS = map[string]seenQuota{}
		s.byName[eq.Name] = byNS
	}
	e, ok := byNS[eq.Namespace]
	if !ok {
		s.seen++
		e.order = s.seen
	}
	e.eq = eq
	byNS[eq.Namespace] = e
	return s.Counting(eq.Name)
}

// Remove forgets eq and returns the quota of its name that counts now, if
// any is left.
func (s *SameNames) Remove(eq *eqv1alpha1.ElasticQuota) *eqv1alpha1.ElasticQuota {
	if byNS := s.byName[eq.Name]; byNS != nil {
		delete(byNS, eq.Namespace)
		if len(byNS) == 0 {
			delete(s.byName, eq.Name)
		}
	}
	return s.Counting(eq.Name)
}

// Counting is the quota of name that counts; nil when there is none.
func (s *SameNames) Counting(name string) *eqv1alpha1.ElasticQuota {
	var best *seenQuota
	for _, e := range s.byName[name] {
		if best == nil || e.eq.CreationTimestamp.Before(&best.eq.CreationTimestamp) ||
			e.eq.CreationTimestamp.Equal(&best.eq.CreationTimestamp) && e.order < best.order {
			best = &e
		}
	}
	if best == nil {
		return nil
	}
	return best.eq
}

// Ignored lists the quotas of name that do not count, by namespace.
func (s *SameNames) Ignored(name string) []*eqv1alpha1.ElasticQuota {
	counting := s.Counting(name)
	var out []*eqv1alpha1.ElasticQuota
	for _, ns := range slices.Sorted(maps.Keys(s.byName[name])) {
		if eq := s.byName[name][ns].eq; eq != counting {
			out = append(out, eq)
		}
	}
	return out
}
