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
	"github.com/koordinator-sh/koord-queue/pkg/jobext/leaderworkerset"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/pod"
)

// TestHandleLeaderWorkerSet: a LeaderWorkerSet with the quota label gets it
// on both templates, without a unit label (each group has its own unit);
// the pods of a set held so (its StatefulSets' pods carry both labels) get
// the gate, with or without extension pod; a StatefulSet pod of no set and a
// set's pod without the quota label are let through unchanged.
func TestHandleLeaderWorkerSet(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	lwsKind := metav1.GroupVersionKind{Group: "leaderworkerset.x-k8s.io", Version: "v1", Kind: "LeaderWorkerSet"}
	podKind := metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}
	for _, withPods := range []bool{false, true} {
		exts := []framework.Extension{leaderworkerset.New(framework.ExtensionOptions{})}
		if withPods {
			exts = append(exts, pod.New(framework.ExtensionOptions{}))
		}
		h := NewHandler(exts, fake.NewClientBuilder().Build(), false, framework.NamespaceSelector{}, clk)

		set := `{"apiVersion":"leaderworkerset.x-k8s.io/v1","kind":"LeaderWorkerSet","metadata":{"name":"s","namespace":"team","labels":{"quota.scheduling.koordinator.sh/name":"q"}},` +
			`"spec":{"replicas":2,"leaderWorkerTemplate":{"size":3,"leaderTemplate":{"spec":{"containers":[{"name":"l","image":"i"}]}},"workerTemplate":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"w","image":"i"}]}}}}}`
		resp := h.Handle(t.Context(), request(lwsKind, admissionv1.Create, set))
		if !resp.Allowed {
			t.Fatalf("set refused: %v", resp.Result)
		}
		got := applied(t, set, resp)
		for _, tmpl := range []string{"leaderTemplate", "workerTemplate"} {
			labels, _ := field(got, "spec", "leaderWorkerTemplate", tmpl, "metadata", "labels").(map[string]any)
			if labels["quota.scheduling.koordinator.sh/name"] != "q" {
				t.Errorf("%s labels %v, want the quota q", tmpl, labels)
			}
			if _, ok := labels["koord-queue/queue-unit"]; ok {
				t.Errorf("%s labels %v name a unit; a group's unit is written on its pods", tmpl, labels)
			}
		}
		if field(got, "spec", "leaderWorkerTemplate", "workerTemplate", "metadata", "labels", "app") != "a" {
			t.Error("the template's own label was lost")
		}

		const sts = `"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"s","uid":"u","controller":true}]`
		const spec = `"spec":{"containers":[{"name":"c","image":"i"}]}`
		cases := []struct {
			name, obj string
			gated     bool
		}{
			{"set's pod", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"s-0","namespace":"team",` + sts + `,"labels":{"quota.scheduling.koordinator.sh/name":"q","leaderworkerset.sigs.k8s.io/name":"s"}},` + spec + `}`, true},
			{"set's pod without quota", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"s-0","namespace":"team",` + sts + `,"labels":{"leaderworkerset.sigs.k8s.io/name":"s"}},` + spec + `}`, false},
			{"other StatefulSet's pod", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x-0","namespace":"team",` + sts + `,"labels":{"quota.scheduling.koordinator.sh/name":"q"}},` + spec + `}`, false},
		}
		for _, tc := range cases {
			resp := h.Handle(t.Context(), request(podKind, admissionv1.Create, tc.obj))
			if !resp.Allowed {
				t.Fatalf("%s refused: %v", tc.name, resp.Result)
			}
			got := applied(t, tc.obj, resp)
			gates, _ := field(got, "spec", "schedulingGates").([]any)
			if tc.gated != (len(gates) == 1 && field(gates[0].(map[string]any), "name") == framework.SchedulingGate) || (!tc.gated && len(gates) != 0) {
				t.Errorf("with extension pod %v: %s has gates %v, gated want %v", withPods, tc.name, gates, tc.gated)
			}
		}
	}
}
