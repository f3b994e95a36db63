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

package queue

import (
	"fmt"
	"testing"
	"time"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// Three quotas of min 0 under a 12-CPU parent, weighted 1:1:2, all asking for
// more than 12: the parent is shared 3/3/6, and stays so (within one job)
// while jobs finish and others take their room.
func TestFairShareByWeight(t *testing.T) {
	weights := map[string]int64{"a": 1, "b": 1, "c": 2}
	specs := []quota.Spec{{Name: "parent", Max: cpu(12)}}
	for name, w := range weights {
		specs = append(specs, quota.Spec{Name: schedtypes.QuotaName(name), Parent: "parent", Max: cpu(12), Weight: cpu(w)})
	}
	h := newHarness(t, specs...)
	h.m = NewManager(nil, WithShareOrder(func(q schedtypes.QueueName) float64 { return h.tree.Share(schedtypes.QuotaName(q)) }, h.tree.Weighted))
	running := map[string][]string{}
	for name := range weights {
		h.m.UpsertQueue(Settings{Name: schedtypes.QueueName(name), Policy: schedv1alpha1.QueuePolicyPriority})
		for i := range 30 {
			unit := fmt.Sprintf("%s-%02d", name, i)
			h.m.Upsert(&schedtypes.Unit{Key: schedtypes.UnitKey("ns/" + unit), Namespace: "ns", Name: unit, Created: t0.Add(time.Duration(i) * time.Second),
				Quota: schedtypes.QuotaName(name), Cohort: "parent", Request: cpu(1)}, schedtypes.QueueName(name), true)
		}
	}
	admit := func() {
		for _, u := range h.pass() {
			q := u[:1]
			running[q] = append(running[q], u)
		}
	}
	check := func(when string) {
		t.Helper()
		for name, w := range weights {
			if got, want := len(running[name]), int(3*w); got < want-1 || got > want+1 {
				t.Errorf("%s: quota %s runs %d jobs, want %d±1 (all: a=%d b=%d c=%d)", when, name, got, want,
					len(running["a"]), len(running["b"]), len(running["c"]))
			}
		}
	}
	admit()
	for name, w := range weights {
		if got := len(running[name]); got != int(3*w) {
			t.Errorf("first pass: %s got %d, want exactly %d", name, got, 3*w)
		}
	}
	// Jobs finish in turn, oldest first across quotas; the freed room goes to
	// whoever is furthest below its share.
	order := []string{"c", "a", "c", "b", "a", "c", "c", "b", "a", "b", "c", "a"}
	for i, name := range order {
		if len(running[name]) == 0 {
			continue
		}
		h.tree.Release(schedtypes.QuotaName(name), cpu(1))
		running[name] = running[name][1:]
		h.m.Freed("parent")
		admit()
		check(fmt.Sprintf("after finish %d (%s)", i, name))
	}
}
