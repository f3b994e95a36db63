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
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// apartJob is a fakeJob whose pod labels must be written apart from its
// resume, and whose pods depend on an object that may be missing.
type apartJob struct {
	*fakeJob
	missing string
}

func (a *apartJob) LabelsApart() {}

func (a *apartJob) Resolve(context.Context, client.Reader) error {
	if a.missing != "" {
		return &MissingError{What: a.missing}
	}
	return nil
}

func apartExtension(missing string) *Extension {
	ext := fakeExtension(onePodSet(), JobStatus{})
	ext.Wrap = func(o client.Object) (GenericJob, error) {
		return &apartJob{fakeJob: &fakeJob{cm: o.(*corev1.ConfigMap), sets: onePodSet()}, missing: missing}, nil
	}
	return ext
}

// jobWrites records the job's data after each patch of it.
func jobWrites(c client.Client) (client.Client, *[]map[string]string) {
	var writes []map[string]string
	return interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			err := c.Patch(ctx, obj, patch, opts...)
			if cm, ok := obj.(*corev1.ConfigMap); ok && err == nil {
				data := map[string]string{}
				for k, v := range cm.Data {
					data[k] = v
				}
				writes = append(writes, data)
			}
			return err
		},
	}), &writes
}

// TestLabelsApartResume: an admitted LabelsApart job gets its pod labels in
// one write, still suspended, and is resumed in the next; any other kind gets
// both in one write.
func TestLabelsApartResume(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ext   *Extension
		wants []string // per write: suspend value, and whether the unit label is there
	}{
		{"apart", apartExtension(""), []string{"true labelled", "false labelled"}},
		{"together", fakeExtension(onePodSet(), JobStatus{}), []string{"false labelled"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := newFakeJob("j", map[string]string{schedv1alpha1.QuotaNameLabel: "q"}, nil, onePodSet())
			unit := &schedv1alpha1.QueueUnit{
				ObjectMeta: metav1.ObjectMeta{Name: "j-fake", Namespace: "ns"},
				Spec: schedv1alpha1.QueueUnitSpec{Queue: "q", ConsumerRef: &corev1.ObjectReference{
					APIVersion: "v1", Kind: "ConfigMap", Name: "j", Namespace: "ns", UID: job.cm.UID,
				}},
				Status: schedv1alpha1.QueueUnitStatus{
					Phase:      schedv1alpha1.QueueUnitPhaseDequeued,
					Admissions: []schedv1alpha1.Admission{{Name: "main", Replicas: 1}},
				},
			}
			c, writes := jobWrites(fakeClient(job.cm, unit))
			r := NewReconciler(c, tc.ext, events.NewFakeRecorder(100), clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), ReconcilerOptions{})
			reconcileJob(t, r, "ns")
			var got []string
			for _, w := range *writes {
				s := w["suspend"]
				if w[podLabelKey(schedv1alpha1.QueueUnitLabel)] == "j-fake" {
					s += " labelled"
				}
				got = append(got, s)
			}
			if strings.Join(got, ", ") != strings.Join(tc.wants, ", ") {
				t.Errorf("writes = %v, want %v", got, tc.wants)
			}
		})
	}
}

// TestMissingDependency: a job whose pods depend on a missing object gets
// no unit and a Warning naming it, and is left as it is.
func TestMissingDependency(t *testing.T) {
	job := newFakeJob("j", map[string]string{schedv1alpha1.QuotaNameLabel: "q"}, nil, onePodSet())
	job.cm.Data["suspend"] = "false"
	c, writes := jobWrites(fakeClient(job.cm))
	rec := events.NewFakeRecorder(10)
	r := NewReconciler(c, apartExtension("Runtime r"), rec, clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), ReconcilerOptions{})
	reconcileJob(t, r, "ns")
	if _, err := storedUnit(c, "ns"); err == nil {
		t.Error("a unit was made for a job whose pods cannot be known")
	}
	if len(*writes) > 0 {
		t.Errorf("the job was written: %v", *writes)
	}
	select {
	case e := <-rec.Events:
		if !strings.Contains(e, EventWaitingForDependency) || !strings.Contains(e, "Runtime r not found") {
			t.Errorf("event %q", e)
		}
	default:
		t.Error("no event")
	}
}
