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

package schedtypes

import "testing"

func TestWalkStateOf(t *testing.T) {
	lack := &Lack{Resource: "cpu", Amount: 3, Root: true}
	for name, c := range map[string]struct {
		f    *Failure
		want WalkState
	}{
		"never tried":        {nil, WalkState{}},
		"held back":          {&Failure{HeldBack: true, Recheck: &Recheck{Lack: lack}}, WalkState{}},
		"held back, waiting": {&Failure{HeldBack: true, UntilCohortChanges: true}, WalkState{Waits: true, HeldBack: true}},
		"refused":            {&Failure{Blocking: true, NeverFits: true}, WalkState{Waits: true, Blocking: true, NeverFits: true}},
		"lacking room": {&Failure{Reserves: true, Recheck: &Recheck{Preempt: true, Lack: lack}},
			WalkState{Waits: true, ForRoom: true, Preempt: true, Reserves: true, Lack: Lack{Resource: "cpu", Amount: 3, Root: true}}},
	} {
		if got := WalkStateOf(c.f); got != c.want {
			t.Errorf("%s: got %+v, want %+v", name, got, c.want)
		}
	}
}
