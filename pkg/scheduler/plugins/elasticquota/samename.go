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

package elasticquota

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
)

// sameNames keeps every ElasticQuota seen by name and namespace. Quota
// names are cluster-wide (a job names its quota without a namespace, and
// koord-manager's webhook refuses a second quota of a name): when two
// namespaces hold one name anyway, the oldest counts (of two created in the
// same second, the one seen first) and the others are reported and
// ignored. Under Plugin.mu.
type sameNames struct {
	byName map[string]map[string]seenQuota
	seen   uint64
}

type seenQuota struct {
	eq *eqv1alpha1.ElasticQuota
	// order is when it was first seen.
	order uint64
}

func newSameNames() *sameNames {
	return &sameNames{byName: map[string]map[string]seenQuota{}}
}

// add records eq and returns the quota of its name that counts.
func (s *sameNames) add(eq *eqv1alpha1.ElasticQuota) *eqv1alpha1.ElasticQuota {
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
	return s.counting(eq.Name)
}

// remove forgets eq and returns the quota of its name that counts now, if
// any is left.
func (s *sameNames) remove(eq *eqv1alpha1.ElasticQuota) *eqv1alpha1.ElasticQuota {
	if byNS := s.byName[eq.Name]; byNS != nil {
		delete(byNS, eq.Namespace)
		if len(byNS) == 0 {
			delete(s.byName, eq.Name)
		}
	}
	return s.counting(eq.Name)
}

// counting is the quota of name that counts; nil when there is none.
func (s *sameNames) counting(name string) *eqv1alpha1.ElasticQuota {
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

// ignored lists the quotas of name that do not count, by namespace.
func (s *sameNames) ignored(name string) []*eqv1alpha1.ElasticQuota {
	counting := s.counting(name)
	var out []*eqv1alpha1.ElasticQuota
	for _, ns := range slices.Sorted(maps.Keys(s.byName[name])) {
		if eq := s.byName[name][ns].eq; eq != counting {
			out = append(out, eq)
		}
	}
	return out
}

// reportSameName gives a Warning event DuplicateQuotaName, once, to every
// quota of counting's name that is ignored; a quota that counts again (the
// older one went) may be warned again later.
func (s *follower) reportSameName(counting *eqv1alpha1.ElasticQuota) {
	s.p.mu.Lock()
	ignored := s.p.sameName.ignored(counting.Name)
	var warn []*eqv1alpha1.ElasticQuota
	var msgs []string
	for _, eq := range ignored {
		msg := fmt.Sprintf("quota name %s is already used by ElasticQuota %s/%s, created earlier; quota names are cluster-wide (jobs name a quota without its namespace, and Koordinator refuses a second quota of a name): koord-queue follows %s/%s and ignores this one until it is renamed or the other is deleted",
			eq.Name, counting.Namespace, counting.Name, counting.Namespace, counting.Name)
		key := eq.Namespace + "/" + eq.Name
		if s.p.sameNameReported[key] != msg {
			s.p.sameNameReported[key] = msg
			warn, msgs = append(warn, eq), append(msgs, msg)
		}
	}
	delete(s.p.sameNameReported, counting.Namespace+"/"+counting.Name)
	s.p.mu.Unlock()
	for i, eq := range warn {
		s.p.h.Recorder().Eventf(eq, corev1.EventTypeWarning, "DuplicateQuotaName", "%s", msgs[i])
	}
}
