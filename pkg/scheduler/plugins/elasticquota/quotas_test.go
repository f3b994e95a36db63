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

package elasticquota

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllertest"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

func TestQuotaDeletedRefusesItsUnits(t *testing.T) {
	eq := utiltesting.MakeElasticQuota("team-a").Max(corev1.ResourceCPU, "4").Obj()
	p, h := newTestPlugin(t, nil, eq)
	before := h.invalidations()
	// The informer may hand over a tombstone.
	p.follow.onQuotaDelete(toolscache.DeletedFinalStateUnknown{Key: "default/team-a", Obj: eq})
	if h.invalidations() == before {
		t.Error("deleting a quota did not make waiting units worth trying again")
	}
	if s := p.Filter(context.Background(), unit("u", "team-a", 0, 1)); s.IsSuccess() {
		t.Error("a unit of a deleted quota fits")
	}
}

func TestOnQuotaInvalidatesOnlyOnChange(t *testing.T) {
	eq := utiltesting.MakeElasticQuota("q").Max(corev1.ResourceCPU, "4").Obj()
	p, h := newTestPlugin(t, nil, eq)
	if h.invalidations() != 1 {
		t.Fatalf("a new quota made %d invalidations, want 1", h.invalidations())
	}
	same := eq.DeepCopy()
	same.ResourceVersion = "2"
	p.follow.onQuota(same)
	if h.invalidations() != 1 {
		t.Error("a quota update that changed nothing the tree reads invalidated")
	}
	bigger := utiltesting.MakeElasticQuota("q").Max(corev1.ResourceCPU, "8").Obj()
	p.follow.onQuota(bigger)
	if h.invalidations() != 2 {
		t.Error("a larger max did not invalidate")
	}
	if s := p.Filter(context.Background(), unit("u", "q", 0, 6)); !s.IsSuccess() {
		t.Errorf("6 CPUs refused after the max went to 8: %+v", s)
	}
	// Objects of other kinds are ignored.
	p.follow.onQuota(&corev1.Pod{})
	p.follow.onQuotaDelete(&corev1.Pod{})
}

// TestWarningsAreReportedOnce checks the Warning events of report: a
// broken tree, children's min above the parent's, a bad shared weight and a
// bad namespaces list, each said once. (A bad policy is the Queue's, said
// by pkg/quotaqueues.)
func TestWarningsAreReportedOnce(t *testing.T) {
	quotas := []*quotaObj{
		utiltesting.MakeElasticQuota("orphan").Parent("missing").Max(corev1.ResourceCPU, "1").Obj(),
		utiltesting.MakeElasticQuota("parent").IsParent(true).Min(corev1.ResourceCPU, "2").Max(corev1.ResourceCPU, "8").Obj(),
		utiltesting.MakeElasticQuota("kid-1").Parent("parent").Min(corev1.ResourceCPU, "2").Max(corev1.ResourceCPU, "4").Obj(),
		utiltesting.MakeElasticQuota("kid-2").Parent("parent").Min(corev1.ResourceCPU, "1").Max(corev1.ResourceCPU, "4").Obj(),
		utiltesting.MakeElasticQuota("weights").Max(corev1.ResourceCPU, "1").Annotation(eqv1alpha1.SharedWeightAnnotation, "lots").Obj(),
		utiltesting.MakeElasticQuota("names").Max(corev1.ResourceCPU, "1").Annotation(eqv1alpha1.NamespacesAnnotation, "team-b").Obj(),
	}
	p, h := newTestPlugin(t, nil, quotas...)
	want := map[string]string{
		"orphan":  "InvalidQuotaTree",
		"parent":  "InvalidQuotaMin",
		"weights": "InvalidSharedWeight",
		"names":   "InvalidNamespaces",
	}
	for name, reason := range want {
		p.follow.report(name)
		events := h.events()
		if len(events) != 1 || !strings.HasPrefix(events[0], "Warning "+reason+" ") {
			t.Errorf("quota %s: events %q, want one Warning %s", name, events, reason)
		}
	}
	if got := h.events(); len(got) != 0 {
		t.Fatalf("stray events: %q", got)
	}
	// Synced again, only the problems without memory are said again.
	for name := range want {
		p.follow.report(name)
	}
	for _, e := range h.events() {
		if strings.Contains(e, "InvalidQuotaTree") || strings.Contains(e, "InvalidQuotaMin") {
			t.Errorf("said twice: %s", e)
		}
	}
}

func TestTenancy(t *testing.T) {
	eq := utiltesting.MakeElasticQuota("team-a").Namespace("ns-a").Max(corev1.ResourceCPU, "4").Obj()
	listed := eq.DeepCopy()
	listed.Annotations = map[string]string{eqv1alpha1.NamespacesAnnotation: `["ns-b"]`}
	malformed := eq.DeepCopy()
	malformed.Annotations = map[string]string{eqv1alpha1.NamespacesAnnotation: `ns-b`}
	for _, tc := range []struct {
		name    string
		quota   *quotaObj
		shared  bool
		ns      string
		refused bool
	}{
		{"own namespace", eq, false, "ns-a", false},
		{"another namespace", eq, false, "ns-b", true},
		{"listed namespace", listed, false, "ns-b", false},
		{"namespace not listed", listed, false, "ns-c", true},
		{"malformed list", malformed, false, "ns-b", true},
		{"shared quotas", eq, true, "ns-b", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newTestPlugin(t, &configv1.ElasticQuotaArgs{SharedQuotas: tc.shared}, tc.quota.DeepCopy())
			u := unitIn(tc.ns, "u", "team-a", 0, 1)
			s := p.Filter(context.Background(), u)
			if !tc.refused {
				if !s.IsSuccess() {
					t.Fatalf("refused: %+v", s)
				}
				return
			}
			if s.IsSuccess() || s.Code != framework.UnschedulableAndUnresolvable || s.Reason.String() != "tenancy/team-a/"+tc.ns {
				t.Fatalf("got %+v; want UnschedulableAndUnresolvable with reason tenancy/team-a/%s", s, tc.ns)
			}
			for _, want := range []string{tc.ns, "team-a", eqv1alpha1.NamespacesAnnotation, "sharedQuotas"} {
				if !strings.Contains(s.Message, want) {
					t.Errorf("message %q does not say %q", s.Message, want)
				}
			}
			// No victims are searched for a unit that may not use the quota.
			p.SetUsage("ns-a/holder", holding(unitIn("ns-a", "holder", "team-a", -5, 4), time.Time{}))
			if v := p.Preempt(context.Background(), unitIn(tc.ns, "u", "team-a", 100, 4), true, true, nil); len(v.Units) != 0 {
				t.Errorf("victims found for a refused tenant: %+v", v.Units)
			}
		})
	}
	// A unit the plugin is not told the object of is not refused for tenancy.
	p, _ := newTestPlugin(t, nil, eq.DeepCopy())
	bare := unitIn("ns-b", "u", "team-a", 0, 1)
	bare.Unit = nil
	if s := p.Filter(context.Background(), bare); !s.IsSuccess() {
		t.Errorf("a unit without its object refused: %+v", s)
	}
}

// TestNewWatchesQuotas builds the plugin through its factory on fake
// informers: their events reach the plugin, it is synced once the
// ElasticQuota informer is, and its worker reports on a new quota.
func TestNewWatchesQuotas(t *testing.T) {
	s := scheme.New()
	gvk, err := apiutil.GVKForObject(&eqv1alpha1.ElasticQuota{}, s)
	if err != nil {
		t.Fatal(err)
	}
	quotaInformer := controllertest.NewFakeInformer()
	h := newTestHandle()
	h.informers = &informertest.FakeInformers{Scheme: s,
		InformersByGVK: map[schema.GroupVersionKind]toolscache.SharedIndexInformer{gvk: quotaInformer}}
	built, err := New(runtime.RawExtension{Raw: []byte(`{"oversellRate": 2}`)}, h)
	if err != nil {
		t.Fatal(err)
	}
	p := built.(*Plugin)
	if p.HasSynced() {
		t.Error("synced before the ElasticQuota informer")
	}
	quotaInformer.Synced()
	if !p.HasSynced() {
		t.Error("not synced after the ElasticQuota informer")
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	}()
	quotaInformer.Add(utiltesting.MakeElasticQuota("team-a").Max(corev1.ResourceCPU, "2").Annotation(eqv1alpha1.SharedWeightAnnotation, "lots").Obj())
	// oversellRate 2 came through the factory: 4 CPUs fit a max of 2.
	if s := p.Filter(context.Background(), unit("u", "team-a", 0, 4)); !s.IsSuccess() {
		t.Errorf("the quota added through the informer did not take: %+v", s)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		select {
		case e := <-h.recorder.Events:
			return strings.HasPrefix(e, "Warning InvalidSharedWeight "), nil
		default:
			return false, nil
		}
	}); err != nil {
		t.Fatalf("the worker did not report the new quota's bad shared weight: %v", err)
	}
	var queues schedv1alpha1.QueueList
	if err := h.client.List(context.Background(), &queues); err != nil || len(queues.Items) != 0 {
		t.Errorf("the plugin wrote Queues %v (%v); it only reads quotas", queues.Items, err)
	}
}
