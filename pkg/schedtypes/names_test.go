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
