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

package app

import (
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	kjson "sigs.k8s.io/json"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/util/watchjson"
)

// UnitWatch decodes the QueueUnits of the scheduler's watch events
// (watchjson), with no managed fields: the cache drops them anyway
// (stripUnit), and they are a large part of a unit's JSON. A unit's spec
// changes only with its generation (the API server bumps it on every
// change but to metadata and status), so the spec of a unit the cache
// already holds in that generation is taken from there, not decoded again.
type UnitWatch struct {
	// Kind is what the watch recognises and decodes.
	Kind  watchjson.Kind
	store atomic.Pointer[storeRef]
}

type storeRef struct{ cache.Store }

// NewUnitWatch returns a UnitWatch whose cache is not known yet.
func NewUnitWatch() *UnitWatch {
	uw := &UnitWatch{}
	uw.Kind = watchjson.Kind{GroupVersionKind: schedv1alpha1.GroupVersion.WithKind("QueueUnit"), Decode: uw.decode}
	return uw
}

// NewInformer is watchjson.NewInformer of QueueUnits, whose store the
// decoder then reads.
func (uw *UnitWatch) NewInformer(w *watchjson.Watcher) func(cache.ListerWatcher, runtime.Object, time.Duration, cache.Indexers) cache.SharedIndexInformer {
	newInformer := watchjson.NewInformer(w, &schedv1alpha1.QueueUnit{})
	return func(lw cache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers cache.Indexers) cache.SharedIndexInformer {
		inf := newInformer(lw, obj, resync, indexers)
		if _, ok := obj.(*schedv1alpha1.QueueUnit); ok {
			uw.store.Store(&storeRef{inf.GetStore()})
		}
		return inf
	}
}

func (uw *UnitWatch) decode(data []byte) (runtime.Object, error) {
	ref := uw.store.Load()
	if ref == nil {
		return decodeUnitAfter(data, nil)
	}
	return decodeUnitAfter(data, func(namespace, name string) *schedv1alpha1.QueueUnit {
		obj, ok, err := ref.GetByKey(namespace + "/" + name)
		if err != nil || !ok {
			return nil
		}
		u, _ := obj.(*schedv1alpha1.QueueUnit)
		return u
	})
}

// wireUnit is a QueueUnit as JSON, its managed fields skipped. Its fields
// are QueueUnit's (TestWireUnitHasTheFieldsOfAQueueUnit).
type wireUnit struct {
	Metadata wireMeta                      `json:"metadata"`
	Spec     wireSpec                      `json:"spec"`
	Status   schedv1alpha1.QueueUnitStatus `json:"status"`
}

// wireMeta is ObjectMeta whose managed fields are skipped: the outer field
// hides the embedded one.
type wireMeta struct {
	metav1.ObjectMeta
	ManagedFields skipped `json:"managedFields"`
}

// wireSpec is a unit's spec, taken from prev's unit when it is the same
// unit (UID) in the same generation. A custom resource's keys come sorted,
// so the metadata of unit is read before its spec; when it is not, the
// spec is decoded.
type wireSpec struct {
	unit *wireUnit
	prev func(namespace, name string) *schedv1alpha1.QueueUnit
	spec schedv1alpha1.QueueUnitSpec
}

func (s *wireSpec) UnmarshalJSON(data []byte) error {
	if m := &s.unit.Metadata; s.prev != nil && m.UID != "" && m.Generation > 0 {
		if p := s.prev(m.Namespace, m.Name); p != nil && p.UID == m.UID && p.Generation == m.Generation {
			s.spec = p.Spec
			return nil
		}
	}
	return kjson.UnmarshalCaseSensitivePreserveInts(data, &s.spec)
}

// skipped is a JSON value read past and kept nowhere.
type skipped struct{}

func (*skipped) UnmarshalJSON([]byte) error { return nil }

// decodeUnit decodes a QueueUnit as client-go's JSON decoder does (not
// strict, apiVersion and kind left unset), but for its managed fields.
func decodeUnit(data []byte) (runtime.Object, error) { return decodeUnitAfter(data, nil) }

// decodeUnitAfter is decodeUnit that takes the spec from prev's unit of
// the same name when it is the same unit in the same generation (see
// wireSpec); prev may be nil. The spec taken is shared with prev's unit,
// as the objects of an informer's cache are, never written to.
func decodeUnitAfter(data []byte, prev func(namespace, name string) *schedv1alpha1.QueueUnit) (runtime.Object, error) {
	var w wireUnit
	w.Spec.unit, w.Spec.prev = &w, prev
	if err := kjson.UnmarshalCaseSensitivePreserveInts(withoutManagedFields(data), &w); err != nil {
		return nil, err
	}
	return &schedv1alpha1.QueueUnit{ObjectMeta: w.Metadata.ObjectMeta, Spec: w.Spec.spec, Status: w.Status}, nil
}
