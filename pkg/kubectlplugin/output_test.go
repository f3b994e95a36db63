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

package kubectlplugin

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
)

// printWith parses args as a command's output flags and prints obj.
func printWith(t *testing.T, obj runtime.Object, args ...string) string {
	t.Helper()
	out := newOutputFlags()
	cmd := &cobra.Command{Use: "x"}
	out.addFlags(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	if err := out.validate(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := out.printObject(&buf, obj); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestListObjectIsTheVisibilityType: `list -o json|yaml` prints the
// visibility API's QueueUnitsSummary, which decodes strictly into that type.
func TestListObjectIsTheVisibilityType(t *testing.T) {
	s := gather(t, "ns", clusterObjects()...)
	obj := ListObject(s, ListView(s), "")
	for _, format := range []string{"json", "yaml"} {
		raw := printWith(t, obj, "-o", format)
		got := &visibilityv1alpha1.QueueUnitsSummary{}
		if err := yaml.UnmarshalStrict([]byte(raw), got); err != nil {
			t.Fatalf("-o %s does not decode strictly into a QueueUnitsSummary: %v\n%s", format, err, raw)
		}
		if got.APIVersion != "visibility.koord-queue.x-k8s.io/v1alpha1" || got.Kind != "QueueUnitsSummary" || got.Total != 3 || len(got.Items) != 3 {
			t.Fatalf("-o %s: %s %s total %d items %d", format, got.APIVersion, got.Kind, got.Total, len(got.Items))
		}
		want := visibilityv1alpha1.QueueUnitSummary{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "second", CreationTimestamp: metav1.NewTime(t0.Add(-10 * time.Minute))},
			Phase:      "Enqueued", Queue: "team-a", Quota: "team-a", Priority: 5, PositionInQueue: 1,
			Request: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
			Message: "quota team-a: cpu used 2 + 4 requested > max 4",
		}
		if diff := cmp.Diff(want, got.Items[0], cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
			t.Errorf("-o %s: first item (-want +got):\n%s", format, diff)
		}
	}
	if names := printWith(t, obj, "-o", "jsonpath={.items[*].metadata.name}"); names != "second third first" {
		t.Errorf("-o jsonpath: %q", names)
	}
}

// TestQueuesAndWhyObjects: `queues -o` and `why -o` print documents of the
// plugin's own versioned kinds, with the documented fields at the top.
func TestQueuesAndWhyObjects(t *testing.T) {
	s := gather(t, "ns", clusterObjects()...)
	q, err := QueuesObject(QueuesView(s))
	if err != nil {
		t.Fatal(err)
	}
	var queues struct {
		APIVersion, Kind string
		Items            []QueueRow
	}
	if err := json.Unmarshal([]byte(printWith(t, q, "-o", "json")), &queues); err != nil {
		t.Fatal(err)
	}
	if queues.APIVersion != OutputGroupVersion || queues.Kind != KindQueueList || len(queues.Items) != 2 || queues.Items[0].Name != "team-a" || queues.Items[0].Pending != 2 {
		t.Errorf("queues -o json: %+v", queues)
	}

	var second int
	for i := range s.Units {
		if s.Units[i].Name == "second" {
			second = i
		}
	}
	x, err := ExplanationObject(Explain(s, &s.Units[second]))
	if err != nil {
		t.Fatal(err)
	}
	raw := printWith(t, x, "-o", "yaml")
	var got struct {
		APIVersion  string `json:"apiVersion"`
		Kind        string `json:"kind"`
		Explanation `json:",inline"`
	}
	if err := yaml.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatal(err)
	}
	if got.APIVersion != OutputGroupVersion || got.Kind != KindExplanation || got.Name != "second" || got.Position != 1 || len(got.QuotaPath) != 2 {
		t.Errorf("why -o yaml:\n%s", raw)
	}
}

func TestListFilter(t *testing.T) {
	s := gather(t, "ns", clusterObjects()...)
	for _, tc := range []struct {
		filter ListFilter
		want   []string
	}{
		{ListFilter{}, []string{"second", "third", "first"}},
		{ListFilter{Phase: "enqueued"}, []string{"second", "third"}},
		{ListFilter{Phase: "Running", Queue: "team-a"}, []string{"first"}},
		{ListFilter{Queue: "team-b"}, nil},
		{ListFilter{Quota: "team-a", Phase: "Reserved"}, nil},
	} {
		if err := tc.filter.validate(); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range tc.filter.Keep(ListView(s)) {
			names = append(names, r.Name)
		}
		if diff := cmp.Diff(tc.want, names); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tc.filter, diff)
		}
	}
}

// TestVersionAndCompletion: `version` prints the linked version, and
// cobra's `completion` writes a script for each shell.
func TestVersionAndCompletion(t *testing.T) {
	run := func(args ...string) string {
		var out, errOut bytes.Buffer
		cmd := NewCommand(streamsOf(&out, &errOut))
		cmd.SetArgs(args)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out.String()
	}
	if got := run("version"); !strings.HasPrefix(got, "kubectl-koord_queue version devel, revision ") {
		t.Errorf("version: %q", got)
	}
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		if got := run("completion", shell); !strings.Contains(got, "kubectl-koord_queue") {
			t.Errorf("completion %s does not complete kubectl-koord_queue:\n%.200s", shell, got)
		}
	}
}

// TestVisibilityNotAnswering: a registered visibility API that answers 503
// is said so, with the namespace-deletion hazard, and --source=visibility
// fails with it; an API that is not registered (404) is silently skipped.
func TestVisibilityNotAnswering(t *testing.T) {
	for _, tc := range []struct {
		code     int
		wantDown bool
	}{{http.StatusServiceUnavailable, true}, {http.StatusGatewayTimeout, true}, {http.StatusNotFound, false}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(tc.code)
			_, _ = w.Write([]byte(http.StatusText(tc.code)))
		}))
		cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(clusterObjects()...).Build()
		r := &Reader{Client: c, Visibility: cs.Discovery().RESTClient()}
		s, err := r.Gather(context.Background(), "ns", t0)
		if err != nil {
			t.Fatal(err)
		}
		o := &options{source: sourceVisibility, now: func() time.Time { return t0 }}
		_, strictErr := o.snapshot(context.Background(), r, "ns")
		srv.Close()
		if strictErr == nil || strings.Contains(strictErr.Error(), "not answering") != tc.wantDown {
			t.Errorf("HTTP %d: --source=visibility: %v", tc.code, strictErr)
		}
		down := strings.Contains(s.VisibilityDown, "registered (APIService v1alpha1.visibility.koord-queue.x-k8s.io) but not answering") &&
			strings.Contains(s.VisibilityDown, "namespace deletion hangs")
		if down != tc.wantDown || s.Source != SourceObjects {
			t.Errorf("HTTP %d: source %s, VisibilityDown %q", tc.code, s.Source, s.VisibilityDown)
		}
		if noted := len(s.Notes) > 0 && strings.Contains(s.Notes[0], "not answering"); noted != tc.wantDown {
			t.Errorf("HTTP %d: notes %q", tc.code, s.Notes)
		}
	}
}

// TestQuotaUsageFromVisibility: the quotas the API serves are the usage
// `queues` prints; a caller refused them counts usage from the objects, and
// is not told.
func TestQuotaUsageFromVisibility(t *testing.T) {
	for _, tc := range []struct {
		quotasCode int
		wantRow    string
	}{
		{http.StatusOK, "team-a   Priority   1000       0         1          cpu 3/2/4"},
		{http.StatusForbidden, "team-a   Priority   1000       0         1          cpu 2/2/4"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			switch {
			case strings.HasSuffix(r.URL.Path, "/featuregates"):
				_, _ = w.Write([]byte(`{"gates":{}}`))
			case strings.HasSuffix(r.URL.Path, "/quotas") && tc.quotasCode == http.StatusOK:
				_, _ = w.Write([]byte(`{"kind":"QuotaList","items":[{"metadata":{"name":"team-a"},` +
					`"resources":[{"name":"cpu","min":"2","max":"4","used":"3","borrowed":"1","lent":"0","pending":"5"}],` +
					`"pendingUnits":2,"admittedUnits":1}]}`))
			case strings.HasSuffix(r.URL.Path, "/quotas"):
				w.WriteHeader(tc.quotasCode)
				_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`))
			default:
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
			}
		}))
		cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(clusterObjects()...).Build()
		s, err := (&Reader{Client: c, Visibility: cs.Discovery().RESTClient()}).Gather(context.Background(), "ns", t0)
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := PrintQueues(&buf, QueuesView(s)); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), tc.wantRow+"\n") || len(s.Notes) > 0 {
			t.Errorf("quotas HTTP %d: notes %q, queues:\n%s", tc.quotasCode, s.Notes, buf.String())
		}
	}
}
