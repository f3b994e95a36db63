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
	"math"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// Amounts near the bound a unit may ask for (2^62, resources.MaxAmount) and
// an --oversellrate of 2 or more: the sums saturate, they never wrap to a
// negative number that would let a unit in.

const huge = int64(1) << 62

func hugeTree(t *testing.T, oversell float64) *Tree {
	t.Helper()
	tr := New(oversell)
	if err := tr.Upsert(Spec{Name: "big", Max: schedtypes.Resources{corev1.ResourceCPU: huge}}); err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestOversoldHugeMaxStaysLarge(t *testing.T) {
	for _, rate := range []float64{2, 3, 1e30} {
		tr := hugeTree(t, rate)
		if s := tr.Check("big", schedtypes.Resources{corev1.ResourceCPU: 1000}); s != nil {
			t.Errorf("oversell %v: 1 CPU does not fit a max of 2^62 milli-CPU: %s (limit %d)", rate, s.Message(), s.Limit)
		}
		if s := tr.NeverFits("big", schedtypes.Resources{corev1.ResourceCPU: huge}); s != nil {
			t.Errorf("oversell %v: a request of 2^62 never fits a max of 2^62: %s", rate, s.Message())
		}
	}
}

func TestHugeUsagePlusRequestDoesNotWrap(t *testing.T) {
	// With oversell 3 the limit is beyond int64: 2^62 used, plus 2^62
	// asked, is 2^63, one more than the largest int64.
	tr := hugeTree(t, 3)
	tr.Charge("big", schedtypes.Resources{corev1.ResourceCPU: huge})
	s := tr.Check("big", schedtypes.Resources{corev1.ResourceCPU: huge})
	if s == nil {
		t.Fatal("a second 2^62 fits beside 2^62 under a limit of 2^63-1")
	}
	if s.Limit != math.MaxInt64 {
		t.Errorf("limit %d, want the largest int64 %d", s.Limit, int64(math.MaxInt64))
	}
	if got := s.Missing(); got != 1 {
		t.Errorf("missing %d, want 1 (2^62 + 2^62 - (2^63 - 1))", got)
	}
	// Below the limit, everything still fits.
	if s := tr.Check("big", schedtypes.Resources{corev1.ResourceCPU: huge - 1}); s != nil {
		t.Errorf("2^62 - 1 beside 2^62 under 2^63 - 1: %s", s.Message())
	}
}

func TestHugeShortageMessageIsNotNegative(t *testing.T) {
	tr := hugeTree(t, 1)
	tr.Charge("big", schedtypes.Resources{corev1.ResourceCPU: huge})
	s := tr.Check("big", schedtypes.Resources{corev1.ResourceCPU: huge})
	if s == nil {
		t.Fatal("2^62 fits beside 2^62 under a max of 2^62")
	}
	if got := s.Missing(); got != huge {
		t.Errorf("missing %d, want %d", got, huge)
	}
}
