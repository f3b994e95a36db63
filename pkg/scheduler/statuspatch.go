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

package scheduler

import (
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// statusPatch is the JSON merge patch of a unit's status, from base to to,
// carrying base's resourceVersion: the API refuses it with a conflict when
// the unit changed since base. Sent to the status subresource, which keeps
// nothing but status, it does what
// client.MergeFromWithOptimisticLock{} does there, without encoding and
// comparing both objects' metadata and spec for every write. It is sent
// with the unit's metadata only (unitMeta), so the answer is the unit's
// metadata and not the whole unit: to already is the status written.
type statusPatch struct {
	base, to *schedv1alpha1.QueueUnit
	// sent is to's status as Data encoded it (asServed decodes it).
	sent []byte
}

// Type is a JSON merge patch.
func (*statusPatch) Type() types.PatchType { return types.MergePatchType }

// Data is the patch that turns base's status into to's; obj is what it is
// sent with, the unit or its metadata.
func (p *statusPatch) Data(obj client.Object) ([]byte, error) {
	if obj.GetNamespace() != p.to.Namespace || obj.GetName() != p.to.Name {
		return nil, fmt.Errorf("status patch of QueueUnit %s/%s sent with %T %s/%s", p.to.Namespace, p.to.Name, obj, obj.GetNamespace(), obj.GetName())
	}
	switch o := obj.(type) {
	case *schedv1alpha1.QueueUnit:
	case *metav1.PartialObjectMetadata:
		if o.Kind != "QueueUnit" || o.APIVersion != schedv1alpha1.SchemeGroupVersion.String() {
			return nil, fmt.Errorf("status patch of a QueueUnit sent with the metadata of a %s %s", o.APIVersion, o.Kind)
		}
	default:
		return nil, fmt.Errorf("status patch of a QueueUnit sent with a %T", obj)
	}
	from, err := json.Marshal(&p.base.Status)
	if err != nil {
		return nil, fmt.Errorf("encode the status written from: %w", err)
	}
	to, err := json.Marshal(&p.to.Status)
	if err != nil {
		return nil, fmt.Errorf("encode the status to write: %w", err)
	}
	diff, err := jsonpatch.CreateMergePatch(from, to)
	if err != nil {
		return nil, fmt.Errorf("status patch: %w", err)
	}
	p.sent = to
	return json.Marshal(statusPatchBody{
		Metadata: statusPatchMeta{ResourceVersion: p.base.ResourceVersion},
		Status:   diff,
	})
}

// unitMeta is the metadata of u to send a status patch with: the API then
// answers with the unit's metadata alone (in protobuf), not the whole unit
// in JSON, which costs both sides a decode and an encode of its spec,
// status and field owners.
func unitMeta(u *schedv1alpha1.QueueUnit) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: u.Namespace, Name: u.Name}}
	m.SetGroupVersionKind(schedv1alpha1.SchemeGroupVersion.WithKind("QueueUnit"))
	return m
}

// asServed makes to what the API holds after a status patch whose answer
// was meta: its metadata without the field owners (which the informer's
// copies leave out too), and its status decoded from sent, the status as
// the patch encoded it (times in whole seconds, as the API keeps them).
// sent was encoded from this very status, so decoding it does not fail.
func asServed(to *schedv1alpha1.QueueUnit, meta *metav1.PartialObjectMetadata, sent []byte) {
	to.ObjectMeta = meta.ObjectMeta
	to.ManagedFields = nil
	var st schedv1alpha1.QueueUnitStatus
	if json.Unmarshal(sent, &st) == nil {
		to.Status = st
	}
}

type statusPatchBody struct {
	Metadata statusPatchMeta `json:"metadata"`
	Status   json.RawMessage `json:"status"`
}

type statusPatchMeta struct {
	ResourceVersion string `json:"resourceVersion"`
}
