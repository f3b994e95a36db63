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
	"testing"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// A unit paused for a nomination is told the one made first in its cohort,
// the same one every time it asks, until that one leaves; a nomination made
// again keeps its place.
func TestOtherNominationIsTheFirstMade(t *testing.T) {
	n := newNominations()
	for _, k := range []schedtypes.UnitKey{"ns/c", "ns/a", "ns/d", "ns/b"} {
		n.add(k, "org")
	}
	n.add("ns/x", "other-org")
	n.add("ns/c", "org")
	ask := func(asker schedtypes.UnitKey, want schedtypes.UnitKey) {
		t.Helper()
		for range 50 {
			if got := n.other("org", asker); got != want {
				t.Fatalf("%s is told %q, want %q", asker, got, want)
			}
		}
	}
	ask("ns/borrower", "ns/c")
	ask("ns/c", "ns/a")
	n.remove("ns/c")
	ask("ns/borrower", "ns/a")
	n.remove("ns/a")
	n.remove("ns/d")
	ask("ns/borrower", "ns/b")
	ask("ns/b", "")
	if got := n.other("none", "ns/borrower"); got != "" {
		t.Errorf("a cohort with no nomination names %q", got)
	}
}
