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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// clusterObjects: quota org (max 8 cpu) over team-a (min 2, max 4 cpu) and
// team-b; team-a runs "first" (2 x 1 cpu) and queues "second" (4 cpu, the
// head) and "third" (1 cpu, lower priority); team-b runs "other" (3 cpu) in
// another namespace.
func clusterObjects() []client.Object {
	running := func(name, ns, quotaName string, replicas int32, cpu string) *schedv1alpha1.QueueUnit {
		u := utiltesting.MakeQueueUnit(name, ns).Quota(quotaName).Request("cpu", "9").Created(t0.Add(-time.Hour)).
			Phase(schedv1alpha1.QueueUnitPhaseRunning).Obj()
		u.Status.Quota = quotaName
		u.Status.Admissions = []schedv1alpha1.Admission{{Name: "main", Replicas: replicas,
			Resources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}
		return u
	}
	second := utiltesting.MakeQueueUnit("second", "ns").Quota("team-a").Request("cpu", "4").Priority(5).
		Created(t0.Add(-10 * time.Minute)).Phase(schedv1alpha1.QueueUnitPhaseEnqueued).Obj()
	second.Status.Message = "quota team-a: cpu used 2 + 4 requested > max 4"
	third := utiltesting.MakeQueueUnit("third", "ns").Quota("team-a").Request("cpu", "1").Priority(1).
		Created(t0.Add(-20 * time.Minute)).Phase(schedv1alpha1.QueueUnitPhaseEnqueued).Obj()
	third.Status.Message = "held back behind ns/second"
	done := utiltesting.MakeQueueUnit("done", "ns").Quota("team-a").Request("cpu", "1").Created(t0.Add(-2 * time.Hour)).
		Phase(schedv1alpha1.QueueUnitPhaseSucceed).Obj()
	return []client.Object{
		utiltesting.MakeElasticQuota("org").Namespace("ns").Max("cpu", "8").IsParent(true).Obj(),
		utiltesting.MakeElasticQuota("team-a").Namespace("ns").Parent("org").Min("cpu", "2").Max("cpu", "4").Obj(),
		utiltesting.MakeElasticQuota("team-b").Namespace("other").Parent("org").Max("cpu", "8").Obj(),
		utiltesting.MakeQueue("team-a").Obj(),
		utiltesting.MakeQueue("team-b").Obj(),
		running("first", "ns", "team-a", 2, "1"), second, third, done,
		running("other", "other", "team-b", 3, "1"),
	}
}

func gather(t *testing.T, ns string, objs ...client.Object) *Snapshot {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).Build()
	s, err := (&Reader{Client: c}).Gather(context.Background(), ns, t0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestListView(t *testing.T) {
	s := gather(t, "ns", clusterObjects()...)
	if s.Source != SourceObjects {
		t.Errorf("source %s", s.Source)
	}
	var buf bytes.Buffer
	if err := PrintList(&buf, ListView(s), false, false); err != nil {
		t.Fatal(err)
	}
	want := `NAME     QUEUE    QUOTA    PHASE      POSITION   PRIORITY   AGE   REASON
second   team-a   team-a   Enqueued   1          5          10m   quota team-a: cpu used 2 + 4 requested > max 4
third    team-a   team-a   Enqueued   2          1          20m   held back behind ns/second
first    team-a   team-a   Running    -          0          60m   
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	buf.Reset()
	if err := PrintList(&buf, ListView(s), true, true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if got := strings.Fields(lines[0]); strings.Join(got, " ") != "NAMESPACE NAME QUEUE QUOTA PHASE POSITION PRIORITY AGE JOB REQUEST REASON" {
		t.Errorf("wide header %q", lines[0])
	}
	if got := strings.Fields(lines[1]); strings.Join(got[:10], " ") != "ns second team-a team-a Enqueued 1 5 10m job/second cpu=4" {
		t.Errorf("wide row %q", lines[1])
	}
}

func TestListUsesQueueStatusOrder(t *testing.T) {
	objs := clusterObjects()
	// The scheduler's published order puts third first (as after a priority change).
	q := utiltesting.MakeQueue("team-a").Obj()
	q.Status.QueueItemDetails = []schedv1alpha1.QueueItemDetail{
		{Name: "third", Namespace: "ns", Priority: 1, Position: 1},
		{Name: "second", Namespace: "ns", Priority: 5, Position: 2},
		{Name: "first", Namespace: "ns", Position: 3}, // admitted since
	}
	for i, o := range objs {
		if _, isQueue := o.(*schedv1alpha1.Queue); isQueue && o.GetName() == "team-a" {
			objs[i] = q
		}
	}
	s := gather(t, "ns", objs...)
	var got []string
	for _, r := range ListView(s) {
		got = append(got, r.Name+":"+position(r.Position))
	}
	if diff := cmp.Diff([]string{"third:1", "second:2", "first:-"}, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestExplain(t *testing.T) {
	s := gather(t, "ns", clusterObjects()...)
	u, err := Resolve(s.Units, "ns", "job/third")
	if err != nil {
		t.Fatal(err)
	}
	x := Explain(s, u)
	wantPath := []QuotaLevel{
		{Name: "team-a", Exists: true, Resources: []ResourceLevel{{Resource: "cpu", Used: "2", Min: "2", Max: "4"}}},
		// org carries team-a's 2 and team-b's 3.
		{Name: "org", Exists: true, Resources: []ResourceLevel{{Resource: "cpu", Used: "5", Max: "8"}}},
	}
	if diff := cmp.Diff(wantPath, x.QuotaPath); diff != "" {
		t.Errorf("quota path (-want +got):\n%s", diff)
	}
	if x.Position != 2 || x.QueueLength != 2 || len(x.Ahead) != 1 || x.Ahead[0].Name != "second" || x.Policy != "Priority" {
		t.Errorf("explanation %+v", x)
	}
	var buf bytes.Buffer
	if err := PrintExplanation(&buf, x); err != nil {
		t.Fatal(err)
	}
	want := `QueueUnit:   ns/third (job/third)
Phase:       Enqueued
Priority:    1
Request:     cpu=1
Queue:       team-a (policy Priority)
Position:    2
Quota:       team-a
Reason:      held back behind ns/second

Quota path (leaf to root):
  QUOTA    RESOURCE   USED   MIN   MAX   SHORT
  team-a   cpu        2      2     4     
  org      cpu        5      -     8     

Ahead in queue team-a:
  POSITION   UNIT        PRIORITY   QUOTA    REASON
  1          ns/second   5          team-a   quota team-a: cpu used 2 + 4 requested > max 4
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("why (-want +got):\n%s", diff)
	}

	// The head asks 4 cpu: team-a lacks 2, org 1.
	head, _ := Resolve(s.Units, "ns", "second")
	hx := Explain(s, head)
	if hx.QuotaPath[0].Resources[0].Short != "2" || hx.QuotaPath[1].Resources[0].Short != "1" || hx.Position != 1 || len(hx.Ahead) != 0 {
		t.Errorf("head %+v", hx)
	}
}

func TestExplainHiddenAhead(t *testing.T) {
	s := gather(t, "ns", clusterObjects()...)
	// As the visibility API answers a tenant: positions of the whole queue,
	// units of other namespaces left out.
	s.Source = SourceVisibility
	s.Order["team-a"] = []Entry{
		{Namespace: "ns", Name: "second", Position: 2, Priority: 5},
		{Namespace: "ns", Name: "third", Position: 5, Priority: 1},
	}
	u, _ := Resolve(s.Units, "ns", "third")
	x := Explain(s, u)
	if x.Position != 5 || x.HiddenAhead != 3 || len(x.Ahead) != 1 {
		t.Fatalf("explanation %+v", x)
	}
	var buf bytes.Buffer
	if err := PrintExplanation(&buf, x); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "(3 more in namespaces you may not list)") || !strings.Contains(buf.String(), "Position:    5\n") {
		t.Errorf("why:\n%s", buf.String())
	}
}

func TestQueuesView(t *testing.T) {
	s := gather(t, "ns", clusterObjects()...)
	var buf bytes.Buffer
	if err := PrintQueues(&buf, QueuesView(s)); err != nil {
		t.Fatal(err)
	}
	want := `NAME     POLICY     PRIORITY   PENDING   ADMITTED   USED/MIN/MAX
team-a   Priority   1000       2         1          cpu 2/2/4
team-b   Priority   1000       0         1          cpu 3/-/8
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("queues (-want +got):\n%s", diff)
	}
}

// With the visibility API's quotas, usage is the scheduler's own; a quota
// the API does not list keeps the usage counted from the objects.
func TestQueuesViewReadsTheSchedulersUsage(t *testing.T) {
	s := gather(t, "ns", clusterObjects()...)
	maxCPU := resource.MustParse("4")
	s.QuotaUsage = map[string]*visibilityv1alpha1.Quota{"team-a": {
		ObjectMeta: metav1.ObjectMeta{Name: "team-a"},
		Resources: []visibilityv1alpha1.QuotaResource{
			{Name: corev1.ResourceCPU, Min: resource.MustParse("2"), Max: &maxCPU, Used: resource.MustParse("3")},
			{Name: "nvidia.com/gpu", Pending: resource.MustParse("1")}, // only asked for: not shown
		},
	}}
	var buf bytes.Buffer
	if err := PrintQueues(&buf, QueuesView(s)); err != nil {
		t.Fatal(err)
	}
	want := `NAME     POLICY     PRIORITY   PENDING   ADMITTED   USED/MIN/MAX
team-a   Priority   1000       2         1          cpu 3/2/4
team-b   Priority   1000       0         1          cpu 3/-/8
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("queues (-want +got):\n%s", diff)
	}
}

func TestGateRefusal(t *testing.T) {
	on, off := map[string]bool{"QueueUnitActive": true}, map[string]bool{"QueueUnitActive": false}
	for _, tc := range []struct {
		name   string
		gates  map[string]bool
		active bool
		force  bool
		want   []string // substrings of the error; none: allowed
	}{
		{name: "gate on", gates: on},
		{name: "gate on, forced", gates: on, force: true},
		{name: "gate off", gates: off,
			want: []string{"refused: koord-queue runs without feature gate QueueUnitActive", "--feature-gates=QueueUnitActive=true"}},
		{name: "gate off, forced: --force does not override a known gate", gates: off, force: true,
			want: []string{"refused: koord-queue runs without feature gate QueueUnitActive", "--force does not override", "--feature-gates=QueueUnitActive=true", "controller.featureGates"}},
		{name: "unknown", active: true,
			want: []string{"cannot tell", "--force to resume"}},
		{name: "unknown, forced", active: true, force: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := GateRefusal(tc.gates, "the visibility API is not served", tc.active, tc.force)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("allowed, want an error with %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "-o", "table"}, `unable to match a printer suitable for the output format "table"`},
		{[]string{"queues", "-o", "name"}, `output format "name"`},
		{[]string{"list", "--phase", "Succeed"}, `--phase "Succeed" is not the phase of an unfinished unit`},
		{[]string{"list", "--source", "cache"}, "--source must be auto, visibility or objects"},
		{[]string{"why"}, "why takes one job or unit (KIND/NAME or NAME), got 0 arguments"},
		{[]string{"stop", "a", "b"}, "stop takes one job or unit"},
	} {
		var out, errOut bytes.Buffer
		cmd := NewCommand(streamsOf(&out, &errOut))
		cmd.SetArgs(append(tc.args, "--kubeconfig", "/nonexistent"))
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

func streamsOf(out, errOut *bytes.Buffer) genericiooptions.IOStreams {
	return genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}
}
