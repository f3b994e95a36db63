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

package mappings

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// counting answers from a DefaultRESTMapper and counts the questions.
type counting struct {
	*meta.DefaultRESTMapper
	asked int
}

func (c *counting) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.asked++
	return c.DefaultRESTMapper.RESTMapping(gk, versions...)
}

var (
	v1alpha1 = schema.GroupVersion{Group: "scheduling.x-k8s.io", Version: "v1alpha1"}
	v1beta1  = schema.GroupVersion{Group: "scheduling.x-k8s.io", Version: "v1beta1"}
	unit     = schema.GroupKind{Group: "scheduling.x-k8s.io", Kind: "QueueUnit"}
)

func TestMemoKeepsWhatWasFound(t *testing.T) {
	d := &counting{DefaultRESTMapper: meta.NewDefaultRESTMapper([]schema.GroupVersion{v1alpha1})}
	m := NewMemo(d)

	// Not served yet: the error is not kept.
	for range 2 {
		if _, err := m.RESTMapping(unit, "v1alpha1"); !meta.IsNoMatchError(err) {
			t.Fatalf("unserved kind: err = %v, want no match", err)
		}
	}
	if d.asked != 2 {
		t.Fatalf("delegate asked %d times for an unserved kind, want 2", d.asked)
	}

	d.Add(v1alpha1.WithKind("QueueUnit"), meta.RESTScopeNamespace)
	d.asked = 0
	var first *meta.RESTMapping
	for i := range 3 {
		got, err := m.RESTMapping(unit, "v1alpha1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Resource != v1alpha1.WithResource("queueunits") || got.Scope.Name() != meta.RESTScopeNameNamespace {
			t.Fatalf("mapping = %+v", got)
		}
		if i == 0 {
			first = got
		} else if got != first {
			t.Errorf("answer %d is not the one kept", i)
		}
	}
	if d.asked != 1 {
		t.Errorf("delegate asked %d times for a served kind, want 1", d.asked)
	}

	// No version and one version are kept apart; several versions are
	// always the delegate's.
	if _, err := m.RESTMapping(unit); err != nil {
		t.Fatal(err)
	}
	if _, err := m.RESTMapping(unit); err != nil {
		t.Fatal(err)
	}
	if d.asked != 2 {
		t.Errorf("delegate asked %d times after two questions without version, want 2", d.asked)
	}
	d.Add(v1beta1.WithKind("QueueUnit"), meta.RESTScopeNamespace)
	for range 2 {
		if _, err := m.RESTMapping(unit, "v1beta1", "v1alpha1"); err != nil {
			t.Fatal(err)
		}
	}
	if d.asked != 4 {
		t.Errorf("delegate asked %d times after two questions of two versions, want 4", d.asked)
	}
}
