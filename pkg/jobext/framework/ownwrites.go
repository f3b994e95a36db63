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
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ownWrites remembers, for each job this reconciler wrote, the
// resourceVersion its write returned, until the cache holds that version or a
// later one. A job read from a cache that has not seen the reconciler's own
// last write is not decided on: resumed a moment ago, it still reads as
// suspended and without pods, and an eviction would hand its admission back
// while the job's controller starts its pods (chaos/j-00137,
// docs/reliability.md). The entry goes once the cache caught up, or the job
// went or was replaced.
type ownWrites struct {
	mu   sync.Mutex
	jobs map[types.NamespacedName]written
}

type written struct {
	uid types.UID
	rv  string
}

// record notes obj as this reconciler just wrote it (the API's answer).
func (w *ownWrites) record(obj client.Object) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.jobs == nil {
		w.jobs = map[types.NamespacedName]written{}
	}
	w.jobs[client.ObjectKeyFromObject(obj)] = written{uid: obj.GetUID(), rv: obj.GetResourceVersion()}
}

// behind reports whether obj, as read from the cache, is older than the
// reconciler's last write of it. It says false, and forgets the write, once
// the cache has caught up, when obj is another object of the same name, or
// when the versions cannot be compared.
func (w *ownWrites) behind(obj client.Object) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := client.ObjectKeyFromObject(obj)
	last, ok := w.jobs[key]
	if !ok {
		return false
	}
	if last.uid == obj.GetUID() {
		if c, err := resourceversion.CompareResourceVersion(obj.GetResourceVersion(), last.rv); err == nil && c < 0 {
			return true
		}
	}
	delete(w.jobs, key)
	return false
}

// forget drops what is remembered of the job at key (it is gone).
func (w *ownWrites) forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.jobs, key)
}
