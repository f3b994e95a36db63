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
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// statusPatch is the JSON merge patch of a unit's status, from base to the
// object it is sent with, carrying base's resourceVersion: the API refuses
// it with a conflict when the unit changed since base. Sent to the status
// subresource, which keeps nothing but status, it does what
// client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})
// does there, without encoding and comparing both objects' metadata and
// spec for every write.
type statusPatch struct{ base *schedv1alpha1.QueueUnit }

// Type is a JSON merge patch.
func (statusPatch) Type() types.PatchType { return types.MergePatchType }

// Data is the patch that turns base's status into obj's.
func (p statusPatch) Data(obj client.Object) ([]byte, error) {
	u, ok := obj.(*schedv1alpha1.QueueUnit)
	if !ok {
		return nil, fmt.Errorf("status patch of a %T: only a QueueUnit's status is patched this way", obj)
	}
	from, err := json.Marshal(&p.base.Status)
	if err != nil {
		return nil, fmt.Errorf("encode the status written from: %w", err)
	}
	to, err := json.Marshal(&u.Status)
	if err != nil {
		return nil, fmt.Errorf("encode the status to write: %w", err)
	}
	diff, err := jsonpatch.CreateMergePatch(from, to)
	if err != nil {
		return nil, fmt.Errorf("status patch: %w", err)
	}
	return json.Marshal(statusPatchBody{
		Metadata: statusPatchMeta{ResourceVersion: p.base.ResourceVersion},
		Status:   diff,
	})
}

type statusPatchBody struct {
	Metadata statusPatchMeta `json:"metadata"`
	Status   json.RawMessage `json:"status"`
}

type statusPatchMeta struct {
	ResourceVersion string `json:"resourceVersion"`
}
