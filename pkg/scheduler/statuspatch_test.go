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
	"maps"
	"slices"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// patchedUnit is a waiting unit as the API serves it, with metadata, spec
// and status all filled in.
func patchedUnit() *schedv1alpha1.QueueUnit {
	at := metav1.NewTime(time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC))
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5")}
	return &schedv1alpha1.QueueUnit{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "team-a", Name: "train-7", UID: types.UID("6f1c"), ResourceVersion: "41", Generation: 1,
			Labels:      map[string]string{schedv1alpha1.QuotaNameLabel: "team-a-gpu"},
			Annotations: map[string]string{"note": "kept"},
		},
		Spec: schedv1alpha1.QueueUnitSpec{
			ConsumerRef: &corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Namespace: "team-a", Name: "train-7"},
			Priority:    ptr.To[int32](100), Queue: "team-a-gpu", Resource: cpu,
			PodSet: []schedv1alpha1.PodSet{{Name: "main", Count: 5}},
		},
		Status: schedv1alpha1.QueueUnitStatus{
			Phase: schedv1alpha1.QueueUnitPhaseEnqueued, Message: "insufficient quota: quota team-a-gpu has 2 cpu free",
			LastUpdateTime: &at,
			Conditions: []metav1.Condition{{Type: "QuotaReserved", Status: metav1.ConditionFalse, Reason: "Pending",
				Message: "waits", LastTransitionTime: at}},
		},
	}
}

// statusChanges are changes the writer makes: an admission, a new reason,
// nothing, and an eviction that clears what the admission wrote.
var statusChanges = map[string]func(u *schedv1alpha1.QueueUnit){
	"admission": func(u *schedv1alpha1.QueueUnit) {
		u.Status.Phase = schedv1alpha1.QueueUnitPhaseDequeued
		u.Status.Message = ""
		u.Status.Quota = "team-a-gpu"
		u.Status.Attempts++
		u.Status.Admissions = []schedv1alpha1.Admission{{Name: "main", Replicas: 5}}
		u.Status.Conditions[0].Status = metav1.ConditionTrue
		u.Status.Conditions[0].Reason = "QuotaReserved"
	},
	"report": func(u *schedv1alpha1.QueueUnit) {
		u.Status.Message = "insufficient quota: quota team-a-gpu has 1 cpu free"
	},
	"nothing": func(*schedv1alpha1.QueueUnit) {},
	"eviction": func(u *schedv1alpha1.QueueUnit) {
		u.Status.Phase = schedv1alpha1.QueueUnitPhaseEnqueued
		u.Status.Conditions = nil
		u.Status.LastUpdateTime = nil
	},
}

// TestStatusPatchDoesWhatMergeFromDoes checks that, for every change the
// writer makes, the status patch leaves the status controller-runtime's
// optimistic merge patch leaves, names the same resourceVersion, and
// touches nothing else.
func TestStatusPatchDoesWhatMergeFromDoes(t *testing.T) {
	base := patchedUnit()
	baseJSON, err := json.Marshal(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range slices.Sorted(maps.Keys(statusChanges)) {
		t.Run(name, func(t *testing.T) {
			obj := base.DeepCopy()
			statusChanges[name](obj)
			ours, err := (&statusPatch{base: base, to: obj}).Data(unitMeta(obj))
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}).Data(obj)
			if err != nil {
				t.Fatal(err)
			}
			applied := func(patch []byte) *schedv1alpha1.QueueUnit {
				t.Helper()
				out, err := jsonpatch.MergePatch(baseJSON, patch)
				if err != nil {
					t.Fatalf("apply %s: %v", patch, err)
				}
				u := &schedv1alpha1.QueueUnit{}
				if err := json.Unmarshal(out, u); err != nil {
					t.Fatal(err)
				}
				return u
			}
			got, want := applied(ours), applied(theirs)
			if diff := cmp.Diff(want.Status, got.Status); diff != "" {
				t.Errorf("status after the patch (-merge from +ours):\n%s\npatch: %s", diff, ours)
			}
			if diff := cmp.Diff(obj.Status, got.Status); diff != "" {
				t.Errorf("status after the patch is not the status written (-written +patched):\n%s", diff)
			}
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(ours, &fields); err != nil {
				t.Fatal(err)
			}
			if keys := slices.Sorted(maps.Keys(fields)); !slices.Equal(keys, []string{"metadata", "status"}) {
				t.Errorf("patch %s touches %v, want only metadata (its resourceVersion) and status", ours, keys)
			}
			var meta struct {
				Metadata map[string]any `json:"metadata"`
			}
			if err := json.Unmarshal(ours, &meta); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(map[string]any{"resourceVersion": "41"}, meta.Metadata); diff != "" {
				t.Errorf("patch metadata (-want +got):\n%s", diff)
			}
		})
	}
}

// A status patch is sent with its own unit or that unit's metadata, never
// with another object.
func TestStatusPatchRefusesOtherObjects(t *testing.T) {
	u := patchedUnit()
	p := &statusPatch{base: u, to: u.DeepCopy()}
	other := unitMeta(u)
	other.Name = "train-8"
	queueMeta := unitMeta(u)
	queueMeta.SetGroupVersionKind(schedv1alpha1.SchemeGroupVersion.WithKind("Queue"))
	for name, obj := range map[string]client.Object{
		"a Queue":                 &schedv1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Namespace: u.Namespace, Name: u.Name}},
		"another unit's metadata": other,
		"a Queue's metadata":      queueMeta,
	} {
		if _, err := p.Data(obj); err == nil {
			t.Errorf("a status patch of %s/%s sent with %s must fail", u.Namespace, u.Name, name)
		}
	}
	for name, obj := range map[string]client.Object{"the unit": u, "its metadata": unitMeta(u)} {
		if _, err := p.Data(obj); err != nil {
			t.Errorf("a status patch sent with %s: %v", name, err)
		}
	}
}

// After a write the unit is what the API holds: the metadata of its answer
// less the field owners, as the informer keeps units, and the status
// written, its times in whole seconds as the API keeps them.
func TestAsServedIsWhatTheAPIHolds(t *testing.T) {
	to := patchedUnit()
	at := metav1.NewTime(time.Date(2026, 12, 6, 10, 0, 7, 123456789, time.UTC))
	to.Status.LastUpdateTime = &at
	to.Status.Conditions[0].LastTransitionTime = at
	meta := unitMeta(to)
	meta.ResourceVersion, meta.UID, meta.Generation = "42", to.UID, to.Generation
	meta.Labels, meta.Annotations = to.Labels, to.Annotations
	meta.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "koord-queue", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"}}
	sent, err := json.Marshal(&to.Status)
	if err != nil {
		t.Fatal(err)
	}
	asServed(to, meta, sent)
	if to.ResourceVersion != "42" || to.ManagedFields != nil {
		t.Errorf("metadata after the write: resourceVersion %q, field owners %v; want the answer's, 42, and none", to.ResourceVersion, to.ManagedFields)
	}
	whole := time.Date(2026, 12, 6, 10, 0, 7, 0, time.UTC)
	if got := to.Status.LastUpdateTime.Time; !got.Equal(whole) {
		t.Errorf("lastUpdateTime %v, want %v as the API keeps it", got, whole)
	}
	if got := to.Status.Conditions[0].LastTransitionTime.Time; !got.Equal(whole) {
		t.Errorf("condition's lastTransitionTime %v, want %v as the API keeps it", got, whole)
	}
	if to.Status.Message != patchedUnit().Status.Message {
		t.Errorf("message %q changed", to.Status.Message)
	}
}

// sentUnit is the unit a status patch writes (the fixtures' interceptors
// see the unit's metadata as obj): the unit, or obj for any other patch.
func sentUnit(obj client.Object, patch client.Patch) client.Object {
	if p, ok := patch.(*statusPatch); ok {
		return p.to
	}
	return obj
}

// BenchmarkStatusPatch compares the cost of computing an admission's patch.
func BenchmarkStatusPatch(b *testing.B) {
	base := patchedUnit()
	obj := base.DeepCopy()
	statusChanges["admission"](obj)
	for _, p := range []struct {
		name  string
		patch client.Patch
	}{
		{"status", &statusPatch{base: base, to: obj}},
		{"merge-from", client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})},
	} {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.patch.Data(obj); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
