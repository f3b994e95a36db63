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
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// An admission the API refuses for good (here: invalid) is told once in a
// StatusWriteRefused event and the unit waits out a backoff on the
// scheduler's clock instead of being decided again at once, in a hot loop;
// it is decided again when the backoff ends.
func TestPassRefusedAdmissionBacksOff(t *testing.T) {
	f := newFixture(t, nil)
	f.plugin.setCapacity("team-a", 2)
	f.addQueue(t, utiltesting.MakeQueue("team-a").Obj())
	f.addUnit(t, makeUnit("a", "team-a", "1").Obj())
	refused := 0
	f.failPatches(func(obj client.Object) error {
		if u, ok := obj.(*schedv1alpha1.QueueUnit); ok && u.Name == "a" && u.Status.Phase == schedv1alpha1.QueueUnitPhaseDequeued {
			refused++
			return apierrors.NewInvalid(schema.GroupKind{Group: schedv1alpha1.GroupVersion.Group, Kind: "QueueUnit"}, "a",
				field.ErrorList{field.Invalid(field.NewPath("status", "admissions"), "x", "injected")})
		}
		return nil
	})
	f.pass(t)
	if refused != 1 {
		t.Fatalf("%d admission attempts, want 1", refused)
	}
	if _, ok := f.plugin.chargedTo("ns/a"); ok {
		t.Fatal("the refused admission keeps its quota")
	}
	if f.pendingIn("team-a", "ns/a") {
		t.Fatal("the refused unit is back in its queue at once: the next pass would be refused again")
	}
	if got := eventsWith(f.takeEvents(), "Warning StatusWriteRefused"); len(got) != 1 || !strings.Contains(got[0], "injected") {
		t.Fatalf("events %v, want one StatusWriteRefused naming the refusal", got)
	}
	// Other units keep moving meanwhile.
	f.addUnit(t, makeUnit("b", "team-a", "1").Obj())
	f.pass(t)
	if got := f.get(t, "b").Status.Phase; got != schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatalf("another unit is %s while the refused one backs off, want Dequeued", got)
	}

	// The backoff ends on the scheduler's clock: decided again, refused again,
	// not told twice.
	f.step(t, time.Second, func() bool { return f.pendingIn("team-a", "ns/a") })
	f.pass(t)
	if refused != 2 {
		t.Fatalf("%d admission attempts after the first backoff, want 2", refused)
	}
	if got := eventsWith(f.takeEvents(), "Warning StatusWriteRefused"); len(got) != 0 {
		t.Fatalf("the same refusal was told again: %v", got)
	}
	// The second backoff is longer: a second is not enough.
	f.clk.Step(time.Second)
	if f.pendingIn("team-a", "ns/a") {
		t.Fatal("the second backoff was not longer than the first")
	}
	f.failPatches(nil)
	f.step(t, time.Second, func() bool { return f.pendingIn("team-a", "ns/a") })
	f.pass(t)
	if got := f.get(t, "a").Status.Phase; got != schedv1alpha1.QueueUnitPhaseDequeued {
		t.Fatalf("phase = %s once the API accepts it, want Dequeued", got)
	}
}

func TestRefusalBackoffDoublesToFiveMinutes(t *testing.T) {
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 9: 256 * time.Second, 10: 5 * time.Minute, 60: 5 * time.Minute} {
		if got := refusalBackoff(n); got != want {
			t.Errorf("refusalBackoff(%d) = %s, want %s", n, got, want)
		}
	}
}
