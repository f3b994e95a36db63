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
	"encoding/json"
	"math/rand"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/randfill"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/pkg/util/watchjson"
)

func TestWireUnitHasTheFieldsOfAQueueUnit(t *testing.T) {
	unit, wire := reflect.TypeFor[schedv1alpha1.QueueUnit](), reflect.TypeFor[wireUnit]()
	var names []string
	for f := range unit.Fields() {
		names = append(names, f.Name)
	}
	// TypeMeta is left unset, as client-go's decoder leaves it.
	if want := []string{"TypeMeta", "ObjectMeta", "Spec", "Status"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("QueueUnit's fields are %v, wireUnit knows %v: add the new ones to wireUnit", names, want)
	}
	for _, name := range []string{"Spec", "Status"} {
		u, _ := unit.FieldByName(name)
		w, _ := wire.FieldByName(name)
		typ := w.Type
		if name == "Spec" {
			spec, _ := typ.FieldByName("spec")
			typ = spec.Type
		}
		if u.Type != typ || u.Tag.Get("json") != w.Tag.Get("json")+",omitempty" {
			t.Errorf("wireUnit.%s is %s %q, QueueUnit's %s %q", name, typ, w.Tag, u.Type, u.Tag)
		}
	}
}

// A unit's spec is taken from the cache's copy of the same unit in the
// same generation, and decoded otherwise.
func TestUnitSpecIsTakenFromTheSameUnitInTheSameGeneration(t *testing.T) {
	unit := func(uid string, generation int64, cpu string) *schedv1alpha1.QueueUnit {
		u := utiltesting.MakeQueueUnit("a", "ns").Quota("q").PodSet("main", 1, "cpu", cpu).Obj()
		u.UID, u.Generation = types.UID(uid), generation
		u.Status.Phase = schedv1alpha1.QueueUnitPhaseRunning
		return u
	}
	for _, tc := range []struct {
		name  string
		cache *schedv1alpha1.QueueUnit
		taken bool
	}{
		{"same unit and generation", unit("uid-1", 2, "1"), true},
		{"older generation", unit("uid-1", 1, "1"), false},
		{"another unit of that name", unit("uid-0", 2, "1"), false},
		{"not in the cache", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The cached spec differs from the event's where it is not
			// taken, so which one was used shows.
			var cached *schedv1alpha1.QueueUnit
			if tc.cache != nil {
				cached = tc.cache.DeepCopy()
				cached.Spec.PodSet[0].Template.Spec.Containers[0].Image = "cached"
			}
			event := unit("uid-1", 2, "1")
			raw, err := json.Marshal(event)
			if err != nil {
				t.Fatal(err)
			}
			asked := 0
			obj, err := decodeUnitAfter(raw, func(namespace, name string) *schedv1alpha1.QueueUnit {
				asked++
				if namespace != "ns" || name != "a" {
					t.Errorf("asked the cache for %s/%s", namespace, name)
				}
				return cached
			})
			if err != nil {
				t.Fatal(err)
			}
			got := obj.(*schedv1alpha1.QueueUnit)
			if asked != 1 {
				t.Errorf("asked the cache %d times, want 1", asked)
			}
			want := event.Spec
			if tc.taken {
				want = cached.Spec
			}
			if diff := cmp.Diff(want, got.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(event.Status, got.Status); diff != "" {
				t.Errorf("status (-event +decoded):\n%s", diff)
			}
		})
	}
}

// TestUnitsDecodeAsClientGoDecodesThem fills QueueUnits at random, writes
// them as kube-apiserver writes a custom resource (keys sorted) and decodes
// each both ways: they must differ in the managed fields alone.
func TestUnitsDecodeAsClientGoDecodesThem(t *testing.T) {
	s := scheme.New()
	codecs := serializer.NewCodecFactory(s)
	info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	clientGo := serializer.WithoutConversionCodecFactory{CodecFactory: codecs}.DecoderToVersion(info.Serializer, schedv1alpha1.GroupVersion)
	f := fuzzer.FuzzerFor(fuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, func(serializer.CodecFactory) []any {
		return []any{func(v *intstr.IntOrString, c randfill.Continue) {
			if c.Bool() {
				*v = intstr.FromInt32(c.Int31())
			} else {
				*v = intstr.FromString(c.String(0))
			}
		}}
	}), rand.NewSource(1), codecs).NilChance(0.2).MaxDepth(8)
	withManagedFields := 0
	for i := range 200 {
		var unit schedv1alpha1.QueueUnit
		f.Fill(&unit)
		unit.APIVersion, unit.Kind = schedv1alpha1.GroupVersion.String(), "QueueUnit"
		raw, err := json.Marshal(&unit)
		if err != nil {
			t.Fatalf("unit %d: %v", i, err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		if raw, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
		want, _, err := clientGo.Decode(raw, nil, nil)
		if err != nil {
			t.Fatalf("unit %d: client-go: %v", i, err)
		}
		got, err := decodeUnit(raw)
		if err != nil {
			t.Fatalf("unit %d: %v", i, err)
		}
		wantUnit := want.(*schedv1alpha1.QueueUnit)
		if len(wantUnit.ManagedFields) > 0 {
			withManagedFields++
		}
		wantUnit.ManagedFields = nil
		if diff := cmp.Diff(wantUnit, got); diff != "" {
			t.Fatalf("unit %d decoded unlike client-go (-client-go +ours):\n%s", i, diff)
		}
	}
	if withManagedFields == 0 {
		t.Fatal("no unit had managed fields to leave out")
	}
}

// The decoder of a UnitWatch reads the store of the QueueUnit informer it
// made, and no other.
func TestUnitWatchReadsItsInformersStore(t *testing.T) {
	uw := NewUnitWatch()
	w, err := watchjson.NewWatcher(&rest.Config{Host: "http://127.0.0.1:1"}, nil, scheme.New(), uw.Kind, "queueunits")
	if err != nil {
		t.Fatal(err)
	}
	newInformer := uw.NewInformer(w)
	never := &cache.ListWatch{}
	// An informer of another kind leaves the decoder as it was.
	other := newInformer(never, &schedv1alpha1.Queue{}, 0, cache.Indexers{})
	unitInformer := newInformer(never, &schedv1alpha1.QueueUnit{}, 0, cache.Indexers{})

	event := utiltesting.MakeQueueUnit("a", "ns").Quota("q").PodSet("main", 1, "cpu", "1").Obj()
	event.UID, event.Generation = "uid-1", 1
	raw, err := json.Marshal(event)
	if err != nil {
		t.Fatal(err)
	}
	cached := event.DeepCopy()
	cached.Spec.PodSet[0].Template.Spec.Containers[0].Image = "cached"
	image := func() string {
		t.Helper()
		obj, err := uw.Kind.Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		return obj.(*schedv1alpha1.QueueUnit).Spec.PodSet[0].Template.Spec.Containers[0].Image
	}
	if err := other.GetStore().Add(cached); err != nil {
		t.Fatal(err)
	}
	if got := image(); got == "cached" {
		t.Error("spec taken from the store of a Queue informer")
	}
	if err := unitInformer.GetStore().Add(cached); err != nil {
		t.Fatal(err)
	}
	if got := image(); got != "cached" {
		t.Errorf("spec decoded (image %q), not taken from the QueueUnit informer's store", got)
	}
}
