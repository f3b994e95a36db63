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

package webhook

import (
	"context"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/job"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/sparkapp"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/tfjob"
)

// TestHandlePodLabels: a managed job's pod templates get its unit's quota
// and name; unknown fields survive; a template naming another quota keeps it
// (the reconciler overwrites it at resume, with an event).
func TestHandlePodLabels(t *testing.T) {
	opts := framework.ExtensionOptions{}
	exts := []framework.Extension{job.New(opts), tfjob.New(opts), sparkapp.New(opts)}
	jobKind := metav1.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}
	tfKind := metav1.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "TFJob"}
	sparkKind := metav1.GroupVersionKind{Group: "sparkoperator.k8s.io", Version: "v1beta2", Kind: "SparkApplication"}
	const quotaKey, unitKey = "quota.scheduling.koordinator.sh/name", "koord-queue/queue-unit"
	labelled := `"labels":{"quota.scheduling.koordinator.sh/name":"q"}`
	cases := map[string]struct {
		req       admission.Request
		manageAll bool
		paths     [][]string
		quota     string
		unit      string
		unknown   []string
	}{
		"Job": {
			req:   request(jobKind, admissionv1.Create, `{"metadata":{"name":"j",`+labelled+`},"spec":{"template":{"metadata":{"x-unknown":1},"spec":{"containers":[]}}}}`),
			paths: [][]string{{"spec", "template", "metadata", "labels"}}, quota: "q", unit: "j",
			unknown: []string{"spec", "template", "metadata", "x-unknown"},
		},
		"Job of --manage-all-jobs gets the default quota": {
			req: request(jobKind, admissionv1.Create, `{"metadata":{"name":"j"},"spec":{"template":{"spec":{"containers":[]}}}}`), manageAll: true,
			paths: [][]string{{"spec", "template", "metadata", "labels"}}, quota: "dq", unit: "j",
		},
		"Job whose template names another quota keeps it": {
			req:   request(jobKind, admissionv1.Create, `{"metadata":{"name":"j",`+labelled+`},"spec":{"template":{"metadata":{"labels":{"quota.scheduling.koordinator.sh/name":"other"}}}}}`),
			paths: [][]string{{"spec", "template", "metadata", "labels"}}, quota: "other", unit: "j",
		},
		"TFJob": {
			req: request(tfKind, admissionv1.Create, `{"metadata":{"name":"j",`+labelled+`},"spec":{"tfReplicaSpecs":{"Worker":{"template":{"spec":{}}},"PS":{"template":{}}}}}`),
			paths: [][]string{
				{"spec", "tfReplicaSpecs", "Worker", "template", "metadata", "labels"},
				{"spec", "tfReplicaSpecs", "PS", "template", "metadata", "labels"},
			},
			quota: "q", unit: "j-tfjob",
		},
		"SparkApplication": {
			req:   request(sparkKind, admissionv1.Create, `{"metadata":{"name":"j",`+labelled+`},"spec":{"type":"Scala","driver":{},"executor":{"labels":{"a":"b"}}}}`),
			paths: [][]string{{"spec", "driver", "labels"}, {"spec", "executor", "labels"}}, quota: "q", unit: "j-sparkapp",
		},
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}
	c := fake.NewClientBuilder().WithObjects(ns).Build()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := NewHandler(exts, c, tc.manageAll, framework.DefaultNamespaceSelector("kq"), clocktesting.NewFakePassiveClock(time.Now()), WithDefaultQuota("dq"))
			resp := h.Handle(context.Background(), tc.req)
			m := applied(t, string(tc.req.Object.Raw), resp)
			for _, p := range tc.paths {
				labels, _ := field(m, p...).(map[string]any)
				if labels[quotaKey] != tc.quota || labels[unitKey] != tc.unit {
					t.Errorf("%v = %v, want quota %q and unit %q", p, labels, tc.quota, tc.unit)
				}
			}
			if tc.unknown != nil && field(m, tc.unknown...) == nil {
				t.Errorf("unknown field %v lost", tc.unknown)
			}
		})
	}
}
