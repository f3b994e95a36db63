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
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/pod"
)

// TestHandlePods: a bare pod with the quota label gets the queue's gate
// (beside its own) and its unit's label; a group member names the group's
// unit; a controller's pod and a pod without the label are let through
// unchanged, even with --manage-all-jobs.
func TestHandlePods(t *testing.T) {
	exts := []framework.Extension{pod.New(framework.ExtensionOptions{})}
	podKind := metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	h := NewHandler(exts, fake.NewClientBuilder().Build(), true, framework.NamespaceSelector{}, clk)
	const spec = `"spec":{"schedulingGates":[{"name":"other.io/gate"}],"containers":[{"name":"c","image":"i"}]}`
	cases := []struct {
		name, obj string
		gated     bool
		unit      string
	}{
		{"bare", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"team","labels":{"quota.scheduling.koordinator.sh/name":"q"}},` + spec + `}`, true, "p-pod"},
		{"member", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"team","labels":{"quota.scheduling.koordinator.sh/name":"q","koord-queue/pod-group":"g"},"annotations":{"koord-queue/pod-group-total-count":"2"}},` + spec + `}`, true, "g-podgroup"},
		{"controller's", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"team","labels":{"quota.scheduling.koordinator.sh/name":"q"},"ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"j","uid":"u","controller":true}]},` + spec + `}`, false, ""},
		{"no label", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"team"},` + spec + `}`, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := h.Handle(t.Context(), request(podKind, admissionv1.Create, tc.obj))
			if !resp.Allowed {
				t.Fatalf("refused: %v", resp.Result)
			}
			got := applied(t, tc.obj, resp)
			gates, _ := field(got, "spec", "schedulingGates").([]any)
			want := 1
			if tc.gated {
				want = 2
			}
			if len(gates) != want {
				t.Fatalf("gates %v, want %d", gates, want)
			}
			if tc.gated && field(gates[1].(map[string]any), "name") != pod.SchedulingGate {
				t.Errorf("gates %v, want %s added after the pod's own", gates, pod.SchedulingGate)
			}
			if u, _ := field(got, "metadata", "labels", "koord-queue/queue-unit").(string); u != tc.unit {
				t.Errorf("unit label %q, want %q", u, tc.unit)
			}
		})
	}
}
