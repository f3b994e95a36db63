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

import (
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestInternerSharesOneCopy(t *testing.T) {
	var in Interner
	a := in.Intern(strings.Repeat("q", 3))
	b := in.Intern(strings.Repeat("q", 3))
	if a != "qqq" || b != "qqq" {
		t.Fatalf("Intern changed the name: %q, %q", a, b)
	}
	if unsafe.StringData(a) != unsafe.StringData(b) {
		t.Fatal("two equal names did not come back as one copy")
	}
	if in.Intern("") != "" {
		t.Fatal("the empty name changed")
	}
}

func TestInternerKeepsAtMostItsBound(t *testing.T) {
	var in Interner
	for i := range maxInterned + 10 {
		if got, want := in.Intern("quota-"+strconv.Itoa(i)), "quota-"+strconv.Itoa(i); got != want {
			t.Fatalf("Intern(%q) = %q", want, got)
		}
	}
	if n := len(in.names); n != maxInterned {
		t.Fatalf("kept %d names, want the bound %d", n, maxInterned)
	}
	late := strings.Repeat("z", 4)
	if got := in.Intern(late); got != late || unsafe.StringData(got) != unsafe.StringData(late) {
		t.Fatalf("a name past the bound must come back as given, got %q", got)
	}
}
