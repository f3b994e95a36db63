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
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Told remembers what a reconciler has told once (an event that must not
// repeat, such as LeftAlone), by reconcile key, so that what it remembers
// of a key can be pruned to what still exists instead of growing for ever.
// The zero value is ready to use.
type Told struct {
	mu sync.Mutex
	m  map[types.NamespacedName]map[string]bool
}

// Once reports whether what is told for the first time under key, and
// remembers it.
func (t *Told) Once(key types.NamespacedName, what string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m[key][what] {
		return false
	}
	if t.m == nil {
		t.m = map[types.NamespacedName]map[string]bool{}
	}
	if t.m[key] == nil {
		t.m[key] = map[string]bool{}
	}
	t.m[key][what] = true
	return true
}

// Keep forgets what was told under key that keep does not keep (what it was
// about is gone); nil keep forgets the key entirely.
func (t *Told) Keep(key types.NamespacedName, keep func(what string) bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	whats := t.m[key]
	for what := range whats {
		if keep == nil || !keep(what) {
			delete(whats, what)
		}
	}
	if len(whats) == 0 {
		delete(t.m, key)
	}
}

// Len is how many things are remembered, over every key.
func (t *Told) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, whats := range t.m {
		n += len(whats)
	}
	return n
}
