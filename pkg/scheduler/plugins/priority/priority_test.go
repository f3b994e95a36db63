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

package priority

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	"github.com/koordinator-sh/koord-queue/pkg/queue"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
)

// TestLess sorts units that differ in each key in turn: priority first
// (higher first), then creation (older first), then namespace and name; and
// it agrees with the queues' default order on every pair.
func TestLess(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	unit := func(ns, name string, prio int32, created time.Time) *schedtypes.Unit {
		return &schedtypes.Unit{Key: schedtypes.NewUnitKey(ns, name), Namespace: ns, Name: name, Priority: prio, Created: created}
	}
	units := []*schedtypes.Unit{
		unit("b", "z", 1, t0),
		unit("a", "late-high", 5, t0.Add(time.Hour)),
		unit("a", "y", 1, t0),
		unit("a", "old-low", 1, t0.Add(-time.Hour)),
		unit("a", "early-high", 5, t0),
		unit("a", "x", 1, t0),
		unit("c", "negative", -3, t0.Add(-48*time.Hour)),
	}
	p, err := New(runtime.RawExtension{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sortLess := p.(framework.QueueSortPlugin).Less
	less := func(a, b *schedtypes.Unit) bool {
		return sortLess(framework.SortUnit{Namespace: a.Namespace, Name: a.Name, Priority: a.Priority, Created: a.Created},
			framework.SortUnit{Namespace: b.Namespace, Name: b.Name, Priority: b.Priority, Created: b.Created})
	}
	for _, a := range units {
		for _, b := range units {
			if less(a, b) != queue.DefaultLess(a, b) {
				t.Errorf("Less(%s, %s) = %v, the queues' default says %v", a.Key, b.Key, less(a, b), queue.DefaultLess(a, b))
			}
		}
	}
	slices.SortStableFunc(units, func(a, b *schedtypes.Unit) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	})
	var got []schedtypes.UnitKey
	for _, u := range units {
		got = append(got, u.Key)
	}
	want := []schedtypes.UnitKey{"a/early-high", "a/late-high", "a/old-low", "a/x", "a/y", "b/z", "c/negative"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if less(units[0], units[0]) {
		t.Error("a unit goes before itself")
	}
}

func TestPluginDeclaresPriorityMajor(t *testing.T) {
	p, err := New(runtime.RawExtension{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != configv1.PluginPriority {
		t.Errorf("Name() = %q, want %q", p.Name(), configv1.PluginPriority)
	}
	pm, ok := p.(framework.PriorityMajorSorter)
	if !ok || !pm.PriorityMajor() {
		t.Error("Priority orders by priority first but does not declare it")
	}
}
