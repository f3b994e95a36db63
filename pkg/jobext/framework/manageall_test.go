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
	"strings"
	"testing"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// TestManageAllJobs checks what --manage-all-jobs takes over: only jobs in the
// selected namespaces, never a started job, and unlabelled jobs in
// --default-quota when set.
func TestManageAllJobs(t *testing.T) {
	sets := onePodSet()
	running := onePodRunning()
	cases := map[string]struct {
		namespace    string
		suspended    bool
		status       JobStatus
		defaultQuota string
		wantUnit     bool
		wantSuspend  bool
		wantQuota    string
		wantEvent    string
	}{
		"user namespace, unsuspended": {namespace: "team", wantUnit: true, wantSuspend: true},
		"kube-system":                 {namespace: "kube-system"},
		"release namespace":           {namespace: "kq"},
		"started job left alone":      {namespace: "team", status: running, wantEvent: EventLeftAlone},
		"started but suspended":       {namespace: "team", suspended: true, status: running, wantUnit: true, wantSuspend: true},
		"default quota":               {namespace: "team", defaultQuota: "dq", wantUnit: true, wantSuspend: true, wantQuota: "dq"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := newFakeJob("j", nil, nil, sets)
			job.cm.Namespace = tc.namespace
			job.cm.Data["suspend"] = boolString(tc.suspended)
			c := fakeClient(job.cm, namespaceObject(tc.namespace))
			r, rec := newTestReconciler(c, fakeExtension(sets, tc.status), ReconcilerOptions{
				ManageAllJobs:     true,
				ManagedNamespaces: DefaultNamespaceSelector("kq"),
				DefaultQuota:      tc.defaultQuota,
			})
			for range 2 {
				reconcileJob(t, r, tc.namespace)
			}
			unit, err := storedUnit(c, tc.namespace)
			if gotUnit := err == nil; gotUnit != tc.wantUnit {
				t.Fatalf("unit exists = %v (%v), want %v", gotUnit, err, tc.wantUnit)
			}
			if tc.wantUnit {
				if got := unit.Labels[schedv1alpha1.QuotaNameLabel]; got != tc.wantQuota || unit.Spec.Queue != tc.wantQuota {
					t.Errorf("unit quota label %q queue %q, want %q", got, unit.Spec.Queue, tc.wantQuota)
				}
				if _, noQuota := unit.Annotations[NoQuotaAnnotation]; noQuota != (tc.wantQuota == "") {
					t.Errorf("annotations %v, want %s only without a quota", unit.Annotations, NoQuotaAnnotation)
				}
			}
			if got := storedSuspended(t, c, job); got != tc.wantSuspend {
				t.Errorf("job suspended = %v, want %v", got, tc.wantSuspend)
			}
			var got []string
			for len(rec.Events) > 0 {
				if e := <-rec.Events; !strings.Contains(e, EventQueueUnitCreated) && !strings.Contains(e, EventSuspended) {
					got = append(got, e)
				}
			}
			switch {
			case tc.wantEvent == "" && len(got) > 0:
				t.Errorf("events %q, want none", got)
			case tc.wantEvent != "" && (len(got) != 1 || !strings.Contains(got[0], tc.wantEvent)):
				t.Errorf("events %q, want one %s over two reconciles", got, tc.wantEvent)
			}
		})
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestDefaultQuotaGivesWaitingUnitsAHome: units made without a quota get
// --default-quota once the controllers run with it, while they wait.
func TestDefaultQuotaGivesWaitingUnitsAHome(t *testing.T) {
	sets := onePodSet()
	job := newFakeJob("j", nil, nil, sets)
	ext := fakeExtension(sets, JobStatus{})
	c := fakeClient(job.cm, namespaceObject("ns"))
	run := func(defaultQuota string) *schedv1alpha1.QueueUnit {
		t.Helper()
		r, _ := newTestReconciler(c, ext, ReconcilerOptions{ManageAllJobs: true, DefaultQuota: defaultQuota})
		reconcileJob(t, r, "ns")
		u, err := storedUnit(c, "ns")
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	if u := run(""); u.Labels[schedv1alpha1.QuotaNameLabel] != "" || u.Annotations[NoQuotaAnnotation] != NoQuotaMessage {
		t.Fatalf("unit without --default-quota: labels %v annotations %v", u.Labels, u.Annotations)
	}
	u := run("dq")
	if u.Labels[schedv1alpha1.QuotaNameLabel] != "dq" || u.Spec.Queue != "dq" {
		t.Errorf("waiting unit after --default-quota: label %q queue %q, want dq", u.Labels[schedv1alpha1.QuotaNameLabel], u.Spec.Queue)
	}
	if _, ok := u.Annotations[NoQuotaAnnotation]; ok {
		t.Errorf("unit in the default quota still says it has none")
	}
}
