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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// TestResumeLabelsPods: a job made while the webhook was away is resumed
// with its pod template labelled with the unit's quota and name; a template
// label naming another quota is overwritten, with a Warning event.
func TestResumeLabelsPods(t *testing.T) {
	for name, tc := range map[string]struct {
		before    string
		wantEvent bool
	}{
		"no label":            {},
		"same quota":          {before: "q"},
		"another quota loses": {before: "other", wantEvent: true},
	} {
		t.Run(name, func(t *testing.T) {
			sets := onePodSet()
			job := newFakeJob("j", map[string]string{schedv1alpha1.QuotaNameLabel: "q"}, nil, sets)
			if tc.before != "" {
				job.cm.Data[podLabelKey(schedv1alpha1.QuotaNameLabel)] = tc.before
			}
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
			c := fakeClient(job.cm, unit)
			r, rec := newTestReconciler(c, fakeExtension(sets, JobStatus{}), ReconcilerOptions{})
			reconcileJob(t, r, "ns")
			if storedSuspended(t, c, job) {
				t.Fatal("job not resumed")
			}
			cm := &corev1.ConfigMap{}
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "j"}, cm); err != nil {
				t.Fatal(err)
			}
			if q, u := cm.Data["pod-label.quota.scheduling.koordinator.sh_name"], cm.Data["pod-label.koord-queue_queue-unit"]; q != "q" || u != "j-fake" {
				t.Errorf("pod labels quota %q unit %q, want q and j-fake", q, u)
			}
			replacedEvent := false
			for len(rec.Events) > 0 {
				if e := <-rec.Events; strings.Contains(e, EventPodLabelsReplaced) && strings.Contains(e, `"other"`) {
					replacedEvent = true
				}
			}
			if replacedEvent != tc.wantEvent {
				t.Errorf("PodLabelsReplaced event %v, want %v", replacedEvent, tc.wantEvent)
			}
		})
	}
}
