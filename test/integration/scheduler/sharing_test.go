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
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// A quota labelled allow-lent-resource: "false" keeps its unused min:
// a sibling borrows only the rest of the parent, and the quota's own units
// get their min at once, with no reclaim.
func TestQuotaThatDoesNotLendKeepsItsMin(t *testing.T) {
	const ns = "no-lend"
	startScheduler(t, noProtection)
	createNamespace(t, ns)
	create(t, utiltesting.MakeElasticQuota("nl-parent").Namespace(ns).Max("cpu", "10").Obj())
	keeper := utiltesting.MakeElasticQuota("nl-keeper").Namespace(ns).Parent("nl-parent").Min("cpu", "6").Max("cpu", "10").Obj()
	keeper.Labels[eqv1alpha1.AllowLentResourceLabel] = "false"
	create(t, keeper)
	create(t, utiltesting.MakeElasticQuota("nl-borrower").Namespace(ns).Parent("nl-parent").Max("cpu", "10").Obj())
	for i := range 6 {
		create(t, utiltesting.MakeQueueUnit(fmt.Sprintf("b-%d", i), ns).Quota("nl-borrower").Request("cpu", "1").Obj())
	}
	for i := range 4 {
		waitPhase(t, ns, fmt.Sprintf("b-%d", i), schedv1alpha1.QueueUnitPhaseDequeued)
	}
	for _, name := range []string{"b-4", "b-5"} {
		u := waitMessage(t, ns, name)
		if u.Status.Phase != schedv1alpha1.QueueUnitPhaseEnqueued || !strings.Contains(u.Status.Message, "6 kept by quotas that do not lend their min") {
			t.Errorf("%s: phase %s, message %q", name, u.Status.Phase, u.Status.Message)
		}
	}
	create(t, utiltesting.MakeQueueUnit("keep", ns).Quota("nl-keeper").Request("cpu", "6").Obj())
	waitPhase(t, ns, "keep", schedv1alpha1.QueueUnitPhaseDequeued)
	for i := range 4 {
		u := getUnit(t, ns, fmt.Sprintf("b-%d", i))
		if meta.IsStatusConditionTrue(u.Status.Conditions, schedv1alpha1.ConditionEvicted) {
			t.Errorf("b-%d evicted: the keeper's min should have been free", i)
		}
	}
}

// Three quotas of min 0 under a 12-CPU parent with shared weights 1:1:2, all
// asking for more than 12: the parent is shared 3/3/6, and stays so within
// one job while jobs finish and others take their room.
func TestSharedWeightSharesTheParent(t *testing.T) {
	const ns = "shared-weight"
	startScheduler(t)
	createNamespace(t, ns)
	weights := map[string]int{"sw-a": 1, "sw-b": 1, "sw-c": 2}
	for name, w := range weights {
		// The parent comes last: until then the tree is broken and nothing is
		// admitted, so every unit is there when sharing starts.
		create(t, utiltesting.MakeElasticQuota(name).Namespace(ns).Parent("sw-parent").Max("cpu", "12").
			Annotation(eqv1alpha1.SharedWeightAnnotation, fmt.Sprintf(`{"cpu":"%d"}`, w)).Obj())
		waitQueue(t, name)
		for i := range 10 {
			create(t, utiltesting.MakeQueueUnit(fmt.Sprintf("%s-%d", name, i), ns).Quota(name).Request("cpu", "1").Obj())
		}
	}
	// Every unit is queued and says why it waits before the parent comes:
	// one the scheduler has not seen yet would join the sharing late.
	for name := range weights {
		for i := range 10 {
			waitMessage(t, ns, fmt.Sprintf("%s-%d", name, i))
		}
	}
	create(t, utiltesting.MakeElasticQuota("sw-parent").Namespace(ns).Max("cpu", "12").Obj())

	admitted := func() map[string][]string {
		out := map[string][]string{}
		for unit, p := range phases(t, ns) {
			if p == schedv1alpha1.QueueUnitPhaseDequeued {
				q := unit[:strings.LastIndex(unit, "-")]
				out[q] = append(out[q], unit)
			}
		}
		return out
	}
	settle := func(when string, exact bool) map[string][]string {
		t.Helper()
		var got map[string][]string
		if err := framework.Eventually(ctx(), 20*time.Second, func(context.Context) (bool, error) {
			got = admitted()
			return len(got["sw-a"])+len(got["sw-b"])+len(got["sw-c"]) == 12, nil
		}); err != nil {
			dump(t, ns)
			t.Fatalf("%s: the parent is not full: %v", when, got)
		}
		for name, w := range weights {
			n, want := len(got[name]), 3*w
			if (exact && n != want) || n < want-1 || n > want+1 {
				t.Errorf("%s: %s runs %d, want %d (a=%d b=%d c=%d)", when, name, n, want, len(got["sw-a"]), len(got["sw-b"]), len(got["sw-c"]))
			}
		}
		return got
	}
	got := settle("first admission", true)
	for i, name := range []string{"sw-c", "sw-a", "sw-c", "sw-b", "sw-a", "sw-c"} {
		setPhase(t, ns, got[name][0], schedv1alpha1.QueueUnitPhaseSucceed)
		got = settle(fmt.Sprintf("after finish %d of %s", i, name), false)
	}
}
