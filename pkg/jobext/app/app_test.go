package app

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEnabledExtensions(t *testing.T) {
	reg := NewRegistry()
	want := []string{"job", "pytorchjob", "raycluster", "rayjob", "rayjobv1alpha1", "sparkapp", "tfjob", "workflow"}
	if diff := cmp.Diff(want, names(reg)); diff != "" {
		t.Errorf("registry (-want +got):\n%s", diff)
	}
	exts, err := enabledExtensions(reg, []string{"job", "tfjob", "job"})
	if err != nil || len(exts) != 2 {
		t.Fatalf("got %d extensions, %v", len(exts), err)
	}
	_, err = enabledExtensions(reg, []string{"job", "mpijob"})
	if err == nil || !strings.Contains(err.Error(), "mpijob") || !strings.Contains(err.Error(), strings.Join(want, ", ")) {
		t.Errorf("unknown extension error = %v", err)
	}
	if _, err := enabledExtensions(reg, nil); err == nil {
		t.Error("no extensions accepted")
	}
}
