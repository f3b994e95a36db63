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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
)

func eqAt(ns, name string, at time.Time) *eqv1alpha1.ElasticQuota {
	return &eqv1alpha1.ElasticQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(at)}}
}

func TestSameNames(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := NewSameNames()
	newer := eqAt("ns-a", "dup", at.Add(time.Minute))
	if got := s.Add(newer); got != newer {
		t.Fatalf("the only quota of its name does not count: %v", got)
	}
	older := eqAt("ns-b", "dup", at)
	if got := s.Add(older); got != older {
		t.Errorf("counting after the older came = %s; want ns-b", got.Namespace)
	}
	if ig := s.Ignored("dup"); len(ig) != 1 || ig[0] != newer {
		t.Errorf("ignored = %v; want ns-a/dup", ig)
	}
	// Of one second, the first seen counts, also after an update of the other.
	tie := eqAt("ns-c", "dup", at)
	s.Add(tie)
	if got := s.Add(tie.DeepCopy()); got != older {
		t.Errorf("counting = %s; want ns-b, seen before ns-c", got.Namespace)
	}
	// The update is what is kept of ns-c.
	if got := s.Remove(older); got == nil || got.Namespace != "ns-c" {
		t.Errorf("counting after ns-b went = %v; want ns-c", got)
	}
	s.Remove(tie)
	s.Remove(newer)
	if got := s.Counting("dup"); got != nil || len(s.byName) != 0 {
		t.Errorf("counting after all went = %v, left %v", got, s.byName)
	}
}
