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

import "sync"

// Interner hands out one shared copy of each name it is given. Quota and
// queue names of units are decoded afresh with every object, each into
// its own bytes; a pass compares and hashes them many times per unit, so
// shared copies compare by pointer and keep one copy of the bytes warm.
// It keeps at most maxInterned names (they are few: quotas and queues);
// past that, a new name is returned as given, which only costs speed.
// The zero value is ready; safe for concurrent use.
type Interner struct {
	mu    sync.Mutex
	names map[string]string
}

// maxInterned bounds what an Interner keeps whatever names units carry.
const maxInterned = 1 << 14

// Intern returns the shared copy of s.
func (in *Interner) Intern(s string) string {
	if s == "" {
		return s
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if c, ok := in.names[s]; ok {
		return c
	}
	if in.names == nil {
		in.names = map[string]string{}
	}
	if len(in.names) < maxInterned {
		in.names[s] = s
	}
	return s
}
