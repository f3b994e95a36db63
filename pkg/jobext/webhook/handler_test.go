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
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/job"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/jobset"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/sparkapp"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/tfjob"
)

func request(kind metav1.GroupVersionKind, op admissionv1.Operation, obj string) admission.Request {
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "u1", Kind: kind, Namespace: "team", Name: "j", Operation: op,
		Object: runtime.RawExtension{Raw: []byte(obj)},
	}}
}

// applied is the object the API server would store: raw with the response's
// patches applied.
func applied(t *testing.T, raw string, resp admission.Response) map[string]any {
	t.Helper()
	out := []byte(raw)
	if len(resp.Patches) > 0 {
		ops, err := json.Marshal(resp.Patches)
		if err != nil {
			t.Fatal(err)
		}
		p, err := jsonpatch.DecodePatch(ops)
		if err != nil {
			t.Fatal(err)
		}
		if out, err = p.Apply(out); err != nil {
			t.Fatalf("apply %s: %v", ops, err)
		}
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func field(m map[string]any, path ...string) any {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[p]
	}
	return cur
}

// TestHandle: what the webhook answers for each kind of input. Every answer
// allows; only managed jobs change, and only in their suspension fields.
func TestHandle(t *testing.T) {
	opts := framework.ExtensionOptions{}
	exts := []framework.Extension{job.New(opts), tfjob.New(opts), sparkapp.New(opts)}
	jobKind := metav1.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}
	tfKind := metav1.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "TFJob"}
	sparkKind := metav1.GroupVersionKind{Group: "sparkoperator.k8s.io", Version: "v1beta2", Kind: "SparkApplication"}
	labelled := `"labels":{"quota.scheduling.koordinator.sh/name":"q"}`
	now := time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)
	const stamp = "2026-12-01T10:00:00.123456789Z"
	cases := map[string]struct {
		req       admission.Request
		manageAll bool
		check     func(t *testing.T, m map[string]any)
		wantPatch bool
	}{
		"labelled Job, suspend false, unknown field kept": {
			req:       request(jobKind, admissionv1.Create, `{"metadata":{"name":"j",`+labelled+`},"spec":{"suspend":false,"futureField":{"x":1},"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}}`),
			wantPatch: true,
			check: func(t *testing.T, m map[string]any) {
				if field(m, "spec", "suspend") != true {
					t.Errorf("spec.suspend = %v", field(m, "spec", "suspend"))
				}
				if field(m, "spec", "futureField", "x") != float64(1) {
					t.Errorf("unknown field lost: spec %v", m["spec"])
				}
				if got := field(m, "metadata", "annotations", "koord-queue/created-at"); got != stamp {
					t.Errorf("created-at = %v, want %s", got, stamp)
				}
			},
		},
		"labelled Job already suspended, with a stamp of its own": {
			req: request(jobKind, admissionv1.Create, `{"metadata":{"name":"j",`+labelled+
				`,"annotations":{"koord-queue/created-at":"2001-01-01T00:00:00Z","keep":"me"}},"spec":{"suspend":true,"template":{}}}`),
			wantPatch: true,
			check: func(t *testing.T, m map[string]any) {
				if got := field(m, "metadata", "annotations", "koord-queue/created-at"); got != stamp {
					t.Errorf("created-at = %v, want the webhook's %s", got, stamp)
				}
				if got := field(m, "metadata", "annotations", "keep"); got != "me" {
					t.Errorf("other annotation = %v", got)
				}
			},
		},
		"unlabelled Job": {
			req: request(jobKind, admissionv1.Create, `{"metadata":{"name":"j"},"spec":{"template":{}}}`),
		},
		"unlabelled Job, manage-all, selected namespace": {
			req: request(jobKind, admissionv1.Create, `{"metadata":{"name":"j"},"spec":{"template":{}}}`), manageAll: true, wantPatch: true,
		},
		"labelled Job, update": {
			req: request(jobKind, admissionv1.Update, `{"metadata":{"name":"j",`+labelled+`},"spec":{"template":{}}}`),
		},
		"TFJob without runPolicy": {
			req:       request(tfKind, admissionv1.Create, `{"metadata":{"name":"j",`+labelled+`},"spec":{"tfReplicaSpecs":{}}}`),
			wantPatch: true,
			check: func(t *testing.T, m map[string]any) {
				if field(m, "spec", "runPolicy", "suspend") != true {
					t.Errorf("spec.runPolicy.suspend = %v", field(m, "spec", "runPolicy", "suspend"))
				}
			},
		},
		"TFJob that does not decode": {
			req: request(tfKind, admissionv1.Create, `{"metadata":{"name":"j",`+labelled+`},"spec":{"tfReplicaSpecs":"oops"}}`),
		},
		"SparkApplication, annotation only": {
			req:       request(sparkKind, admissionv1.Create, `{"metadata":{"name":"j",`+labelled+`,"annotations":{"scheduling.x-k8s.io/suspend":"true"}},"spec":{"type":"Scala"}}`),
			wantPatch: true,
			check: func(t *testing.T, m map[string]any) {
				if field(m, "spec", "suspend") != true || field(m, "metadata", "annotations", "scheduling.x-k8s.io/suspend") != "true" {
					t.Errorf("spec.suspend %v, annotations %v", field(m, "spec", "suspend"), field(m, "metadata", "annotations"))
				}
			},
		},
		"kind no extension serves": {
			req: request(metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, admissionv1.Create, `{"metadata":{"name":"j",`+labelled+`}}`),
		},
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}
	c := fake.NewClientBuilder().WithObjects(ns).Build()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := NewHandler(exts, c, tc.manageAll, framework.DefaultNamespaceSelector("kq"), clocktesting.NewFakePassiveClock(now))
			resp := h.Handle(context.Background(), tc.req)
			if !resp.Allowed {
				t.Fatalf("refused: %+v", resp.Result)
			}
			if got := len(resp.Patches) > 0; got != tc.wantPatch {
				t.Fatalf("patches %v, want some = %v", resp.Patches, tc.wantPatch)
			}
			if tc.check != nil {
				tc.check(t, applied(t, string(tc.req.Object.Raw), resp))
			}
		})
	}
}

// TestHandleTooManyPodSets: a managed JobSet of more replicated jobs than a
// unit has pod sets is refused, the message naming both counts; at the limit
// it is held; an unmanaged one is let through as written.
func TestHandleTooManyPodSets(t *testing.T) {
	kind := metav1.GroupVersionKind{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"}
	jobSet := func(labels string, n int) string {
		var rjs []string
		for i := range n {
			rjs = append(rjs, fmt.Sprintf(`{"name":"r%d","replicas":1,"template":{"spec":{"template":{}}}}`, i))
		}
		return `{"metadata":{"name":"j"` + labels + `},"spec":{"replicatedJobs":[` + strings.Join(rjs, ",") + `]}}`
	}
	labelled := `,"labels":{"quota.scheduling.koordinator.sh/name":"q"}`
	c := fake.NewClientBuilder().Build()
	h := NewHandler([]framework.Extension{jobset.New(framework.ExtensionOptions{})}, c, false,
		framework.DefaultNamespaceSelector("kq"), clocktesting.NewFakePassiveClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)))

	resp := h.Handle(context.Background(), request(kind, admissionv1.Create, jobSet(labelled, 9)))
	if resp.Allowed {
		t.Fatal("a JobSet of 9 replicated jobs was admitted")
	}
	if msg := resp.Result.Message; !strings.Contains(msg, "9 pod sets") || !strings.Contains(msg, "8") {
		t.Errorf("refusal does not name the count and the limit: %q", msg)
	}
	raw := jobSet(labelled, 8)
	resp = h.Handle(context.Background(), request(kind, admissionv1.Create, raw))
	if !resp.Allowed || field(applied(t, raw, resp), "spec", "suspend") != true {
		t.Errorf("a JobSet of 8 replicated jobs: allowed %v, patches %v", resp.Allowed, resp.Patches)
	}
	resp = h.Handle(context.Background(), request(kind, admissionv1.Create, jobSet("", 9)))
	if !resp.Allowed || len(resp.Patches) > 0 {
		t.Errorf("an unmanaged JobSet of 9: allowed %v, patches %v", resp.Allowed, resp.Patches)
	}
}
