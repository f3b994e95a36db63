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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/util/watchjson"
)

// UnitWatchKind decodes the QueueUnits of watch events (watchjson), with no
// managed fields: the cache drops them anyway (stripUnit), and they are a
// large part of a unit's JSON.
var UnitWatchKind = watchjson.Kind{GroupVersionKind: schedv1alpha1.GroupVersion.WithKind("QueueUnit"), Decode: decodeUnit}

// wireUnit is a QueueUnit as JSON, its managed fields skipped. Its fields
// are QueueUnit's (TestWireUnitHasTheFieldsOfAQueueUnit).
type wireUnit struct {
	Metadata wireMeta                      `json:"metadata"`
	Spec     schedv1alpha1.QueueUnitSpec   `json:"spec"`
	Status   schedv1alpha1.QueueUnitStatus `json:"status"`
}

// wireMeta is ObjectMeta whose managed fields are skipped: the outer field
// hides the embedded one.
type wireMeta struct {
	metav1.ObjectMeta
	ManagedFields skipped `json:"managedFields"`
}

// skipped is a JSON value read past and kept nowhere.
type skipped struct{}

func (*skipped) UnmarshalJSON([]byte) error { return nil }

// decodeUnit decodes a QueueUnit as client-go's JSON decoder does (not
// strict, apiVersion and kind left unset), but for its managed fields.
func decodeUnit(data []byte) (runtime.Object, error) {
	var w wireUnit
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, &w); err != nil {
		return nil, err
	}
	return &schedv1alpha1.QueueUnit{ObjectMeta: w.Metadata.ObjectMeta, Spec: w.Spec, Status: w.Status}, nil
}
