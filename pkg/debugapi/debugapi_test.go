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

package debugapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

type fakeSource struct{}

func cpu(n string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(n)}
}

func (fakeSource) Quotas() []Quota {
	return []Quota{{Name: "team-a", Exists: true, Min: cpu("2"), Max: cpu("4"), Used: cpu("4")}}
}

func (fakeSource) Queues() []Queue {
	return []Queue{{Name: "team-a", Policy: "Priority", PendingCount: 2}}
}

func (fakeSource) Orphans() map[string][]string { return map[string][]string{"gone": {"default/x"}} }

func (fakeSource) Queue(_ context.Context, name string) (Queue, bool) {
	if name != "team-a" {
		return Queue{}, false
	}
	return Queue{Name: "team-a", Policy: "Priority", PendingCount: 2, Pending: []Unit{
		{Position: 1, Namespace: "default", Name: "b", Message: "insufficient quota"},
		{Position: 2, Namespace: "default", Name: "c", Message: "held back"},
	}}, true
}

func TestHandler(t *testing.T) {
	h := NewHandler(fakeSource{})
	get := func(path string, out any) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if out != nil {
			if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
				t.Fatalf("%s: %v: %s", path, err, rec.Body.String())
			}
		}
		return rec.Code
	}
	var quotas struct{ Quotas []Quota }
	if code := get("/debug/quotas", &quotas); code != 200 {
		t.Fatalf("quotas: %d", code)
	}
	if diff := cmp.Diff(fakeSource{}.Quotas(), quotas.Quotas); diff != "" {
		t.Errorf("quotas (-want +got):\n%s", diff)
	}
	var queues struct {
		Queues  []Queue
		Orphans map[string][]string
	}
	if code := get("/debug/queues", &queues); code != 200 || len(queues.Queues) != 1 || queues.Queues[0].PendingCount != 2 || len(queues.Orphans["gone"]) != 1 {
		t.Errorf("queues: %d %+v", code, queues)
	}
	var q Queue
	if code := get("/debug/queues/team-a", &q); code != 200 {
		t.Fatalf("queue: %d", code)
	}
	want, _ := fakeSource{}.Queue(context.Background(), "team-a")
	if diff := cmp.Diff(want, q); diff != "" {
		t.Errorf("queue (-want +got):\n%s", diff)
	}
	if code := get("/debug/queues/nope", nil); code != 404 {
		t.Errorf("unknown queue: %d", code)
	}
}
