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

// TestUnitKey checks that a key is "namespace/name" and splits back into its
// parts, and that a key without a namespace splits into its name alone.
func TestUnitKey(t *testing.T) {
	for _, tc := range []struct {
		key      UnitKey
		ns, name string
	}{
		{NewUnitKey("team-a", "job-1"), "team-a", "job-1"},
		{"default/x", "default", "x"},
		{"cluster-wide", "", "cluster-wide"},
		{"a/b/c", "a", "b/c"},
	} {
		ns, name := tc.key.Split()
		if ns != tc.ns || name != tc.name {
			t.Errorf("%q.Split() = %q, %q; want %q, %q", tc.key, ns, name, tc.ns, tc.name)
		}
	}
	if got := NewUnitKey("team-a", "job-1"); got != "team-a/job-1" {
		t.Errorf("NewUnitKey = %q, want %q", got, "team-a/job-1")
	}
}
