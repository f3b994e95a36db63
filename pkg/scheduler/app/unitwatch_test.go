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
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/randfill"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
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
		if u.Type != w.Type || u.Tag.Get("json") != w.Tag.Get("json")+",omitempty" {
			t.Errorf("wireUnit.%s is %s %q, QueueUnit's %s %q", name, w.Type, w.Tag, u.Type, u.Tag)
		}
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
