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
	"testing"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// TestBackstop: a job that asked for the queue but runs unsuspended without a
// unit (created before the install, or while the webhook was down) is
// suspended and queued, even after it started and even with
// --manage-all-jobs, which alone would leave a started job alone.
func TestBackstop(t *testing.T) {
	sets := onePodSet()
	running := onePodRunning()
	finished := JobStatus{Finished: true}
	labelled := map[string]string{schedv1alpha1.QuotaNameLabel: "q"}
	cases := map[string]struct {
		labels    map[string]string
		namespace string
		status    JobStatus
		manageAll bool
		wantHeld  bool
	}{
		"labelled, started, not suspended":    {labels: labelled, status: running, wantHeld: true},
		"labelled, never started":             {labels: labelled, wantHeld: true},
		"labelled, started, manage-all":       {labels: labelled, status: running, manageAll: true, wantHeld: true},
		"labelled in kube-system":             {labels: labelled, namespace: KubeSystemNamespace, status: running, wantHeld: true},
		"labelled but finished":               {labels: labelled, status: finished},
		"unlabelled, started":                 {status: running},
		"unlabelled, started, manage-all":     {status: running, manageAll: true},
		"unlabelled, not started, manage-all": {manageAll: true, wantHeld: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := tc.namespace
			if ns == "" {
				ns = "team"
			}
			job := newFakeJob("j", tc.labels, nil, sets)
			job.cm.Namespace = ns
			job.cm.Data["suspend"] = "false"
			c := fakeClient(job.cm, namespaceObject(ns))
			r, _ := newTestReconciler(c, fakeExtension(sets, tc.status), ReconcilerOptions{
				ManageAllJobs:     tc.manageAll,
				ManagedNamespaces: DefaultNamespaceSelector("kq"),
			})
			reconcileJob(t, r, ns)
			if got := storedSuspended(t, c, job); got != tc.wantHeld {
				t.Errorf("job suspended = %v, want %v", got, tc.wantHeld)
			}
			_, err := storedUnit(c, ns)
			if gotUnit := err == nil; gotUnit != tc.wantHeld {
				t.Errorf("unit exists = %v (%v), want %v", gotUnit, err, tc.wantHeld)
			}
		})
	}
}
