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

package framework

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

// len is how many jobs are listed.
func (o *creationOrder) len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.quotaOf)
}

func TestCreationOrder(t *testing.T) {
	o := newCreationOrder()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	key := func(ns, name string) types.NamespacedName { return types.NamespacedName{Namespace: ns, Name: name} }
	// Listed out of order, as workers would reach them.
	o.add("team-a", key("b", "late"), t0.Add(900*time.Millisecond))
	o.add("team-a", key("b", "first"), t0.Add(100*time.Millisecond))
	o.add("team-a", key("b", "tie-2"), t0.Add(500*time.Millisecond))
	o.add("team-a", key("a", "tie-1"), t0.Add(500*time.Millisecond))
	o.add("team-b", key("b", "other-quota"), t0)

	want := []types.NamespacedName{key("b", "first"), key("a", "tie-1"), key("b", "tie-2")}
	if diff := cmp.Diff(want, o.before(key("b", "late"))); diff != "" {
		t.Errorf("before late (-want +got):\n%s", diff)
	}
	if got := o.before(key("b", "first")); len(got) != 0 {
		t.Errorf("before the first: %v", got)
	}
	if got := o.before(key("b", "not-listed")); len(got) != 0 {
		t.Errorf("before an unlisted job: %v", got)
	}
	o.done(key("a", "tie-1"))
	if diff := cmp.Diff([]types.NamespacedName{key("b", "first")}, o.before(key("b", "tie-2"))); diff != "" {
		t.Errorf("before tie-2 once tie-1 is done (-want +got):\n%s", diff)
	}
	// Relabelled to another quota: listed there only.
	o.add("team-b", key("b", "first"), t0.Add(100*time.Millisecond))
	if diff := cmp.Diff([]types.NamespacedName{key("b", "tie-2")}, o.before(key("b", "late"))); diff != "" {
		t.Errorf("before late once first moved (-want +got):\n%s", diff)
	}
	for _, k := range []types.NamespacedName{key("b", "late"), key("b", "first"), key("b", "tie-2"), key("b", "other-quota"), key("b", "never")} {
		o.done(k)
	}
	if n := o.len(); n != 0 || len(o.byQuota) != 0 {
		t.Errorf("left listed: %d jobs, %d quotas", n, len(o.byQuota))
	}
}

// TestRetryOfNoError: a step that succeeded is neither retried nor logged
// as a failure (it used to wrap a nil error into "release queue unit:
// %!w(<nil>)").
func TestRetryOfNoError(t *testing.T) {
	r := &Reconciler{}
	res, err := r.retry(nil, "release queue unit")
	if err != nil || !res.IsZero() {
		t.Errorf("retry(nil) = %+v, %v; want no requeue and no error", res, err)
	}
}
