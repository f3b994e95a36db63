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

package framework

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestToldOnceAndPruned(t *testing.T) {
	var told Told
	a, b := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}
	if !told.Once(a, "x") || told.Once(a, "x") {
		t.Fatal("x under a is not told exactly once")
	}
	if !told.Once(a, "y") || !told.Once(b, "x") {
		t.Fatal("another thing, or the same under another key, is not told")
	}
	told.Keep(a, func(what string) bool { return what == "y" })
	if told.Len() != 2 || !told.Once(a, "x") {
		t.Errorf("after keeping only y under a: %d remembered, x not told again", told.Len())
	}
	told.Keep(b, nil)
	if !told.Once(b, "x") {
		t.Error("a forgotten key's thing is not told again")
	}
}
