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
	"strings"
	"testing"
	"time"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// stream plays a 24-CPU quota fed a 1-CPU unit every second, each running
// smallRun (so about smallRun/1s of them run at once, and 20 CPU are never
// free), with a 20-CPU unit queued first at the same priority, under the
// Priority policy with maxWait. It returns when (from t0) the big unit was
// admitted, or 0 when it was not within horizon. The big unit always waits
// behind the small ones that keep fitting; only a bound lets it in.
func stream(t *testing.T, maxWait, smallRun, horizon time.Duration) time.Duration {
	t.Helper()
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(24)})
	now := t0
	h.m = NewManager(nil, WithClock(func() time.Time { return now }))
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority, MaxWait: maxWait})
	// The quota is busy with small units, ending one a second, when the big
	// one arrives: the steady state of the stream.
	running := map[string]time.Time{}
	for i := range int(smallRun / time.Second) {
		name := fmt.Sprintf("warm-%d", i)
		h.m.Upsert(&schedtypes.Unit{Key: schedtypes.UnitKey("ns/" + name), Namespace: "ns", Name: name, Created: now, Quota: "a", Cohort: "a", Request: cpu(1), WaitingSince: now}, "q", true)
	}
	for i, name := range h.pass() {
		running[name] = now.Add(time.Duration(i+1) * time.Second)
	}
	big := &schedtypes.Unit{Key: "ns/big", Namespace: "ns", Name: "big", Created: now, Quota: "a", Cohort: "a", Request: cpu(20), WaitingSince: now}
	h.m.Upsert(big, "q", true)
	for i := 0; now.Sub(t0) < horizon; i++ {
		now = now.Add(time.Second)
		for name, end := range running {
			if !now.Before(end) {
				delete(running, name)
				req := cpu(1)
				if name == "big" {
					req = cpu(20)
				}
				h.tree.Release("a", req)
				h.m.Freed("a")
			}
		}
		name := fmt.Sprintf("small-%d", i)
		h.m.Upsert(&schedtypes.Unit{Key: schedtypes.UnitKey("ns/" + name), Namespace: "ns", Name: name, Created: now, Quota: "a", Cohort: "a", Request: cpu(1), WaitingSince: now}, "q", true)
		// A pass runs on every event; the deadline of the bound is one too.
		h.m.Freed("a")
		for _, admitted := range h.pass() {
			if admitted == "big" {
				return now.Sub(t0)
			}
			running[admitted] = now.Add(smallRun)
		}
	}
	return 0
}

// A big unit behind a stream of small ones that keep fitting is admitted
// within its queue's max-wait plus the longest small job; without a bound it
// is overtaken for ever.
func TestMaxWaitBoundsTheWaitOfABigUnit(t *testing.T) {
	const smallRun = 8 * time.Second
	if got := stream(t, 0, smallRun, 10*time.Minute); got != 0 {
		t.Fatalf("without max-wait the big unit got in after %s: the stream does not starve it, so the test proves nothing", got)
	}
	for _, maxWait := range []time.Duration{30 * time.Second, 2 * time.Minute} {
		got := stream(t, maxWait, smallRun, 10*time.Minute)
		t.Logf("max-wait %s: big unit admitted after %s", maxWait, got)
		if got == 0 || got > maxWait+smallRun {
			t.Errorf("max-wait %s: big unit admitted after %s, want within %s", maxWait, got, maxWait+smallRun)
		}
	}
}

// The reserving unit says so, and the units it holds back name it.
func TestMaxWaitMessages(t *testing.T) {
	h := newHarness(t, quota.Spec{Name: "a", Max: cpu(4)})
	now := t0
	h.m = NewManager(nil, WithClock(func() time.Time { return now }))
	h.m.UpsertQueue(Settings{Name: "q", Policy: schedv1alpha1.QueuePolicyPriority, MaxWait: time.Minute})
	h.tree.Charge("a", cpu(3))
	h.m.Upsert(&schedtypes.Unit{Key: "ns/big", Namespace: "ns", Name: "big", Created: t0, Quota: "a", Cohort: "a", Request: cpu(4), WaitingSince: t0}, "q", true)
	h.m.Upsert(&schedtypes.Unit{Key: "ns/small", Namespace: "ns", Name: "small", Created: t0.Add(time.Second), Quota: "a", Cohort: "a", Request: cpu(1), WaitingSince: t0}, "q", true)
	now = t0.Add(2 * time.Minute)
	res := h.m.Pass(h.try)
	if len(res.Admitted) != 0 {
		t.Fatalf("admitted %v past a reserving unit", res.Admitted[0].Unit.Name)
	}
	msgs := map[string]string{}
	for _, f := range res.Failed {
		msgs[f.Unit.Name] = f.Failure.Message
	}
	if m := msgs["big"]; !strings.Contains(m, "reserving: later units of quota a wait until it is admitted") || !strings.Contains(m, "koord-queue/max-wait 1m0s") {
		t.Errorf("big says %q", m)
	}
	if m := msgs["small"]; m != "held back: ns/big has waited longer than koord-queue/max-wait 1m0s and reserves quota a; later units of the quota wait until it is admitted" {
		t.Errorf("small says %q", m)
	}
}
