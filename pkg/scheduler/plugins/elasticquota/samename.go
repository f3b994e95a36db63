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

	corev1 "k8s.io/api/core/v1"

	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
)

// reportSameName gives a Warning event DuplicateQuotaName, once, to every
// quota of counting's name that is ignored; a quota that counts again (the
// older one went) may be warned again later.
func (s *follower) reportSameName(counting *eqv1alpha1.ElasticQuota) {
	s.p.mu.Lock()
	ignored := s.p.sameName.Ignored(counting.Name)
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
