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

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllertest"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// getQueue reads the Queue of quota name; nil when there is none.
func getQueue(t *testing.T, h *testHandle, name string) *schedv1alpha1.Queue {
	t.Helper()
	q := &schedv1alpha1.Queue{}
	err := h.client.Get(context.Background(), client.ObjectKey{Namespace: schedv1alpha1.QueueNamespace, Name: name}, q)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestSyncQueueCreatesTheQueueOfAQuota(t *testing.T) {
	eq := utiltesting.MakeElasticQuota("team-a").Namespace("ns-a").Max(corev1.ResourceCPU, "4").
		Policy(schedv1alpha1.QueuePolicyBlock).Annotation("koord-queue/max-depth", "5").Annotation("other/x", "y").Obj()
	p, h := newTestPlugin(t, nil, eq)
	if err := p.follow.syncQueue(context.Background(), "team-a"); err != nil {
		t.Fatal(err)
	}
	q := getQueue(t, h, "team-a")
	if q == nil {
		t.Fatal("no Queue made for the quota")
	}
	if q.Spec.QueuePolicy != schedv1alpha1.QueuePolicyBlock || ptr.Deref(q.Spec.Priority, 0) != 1000 {
		t.Errorf("Queue spec %+v; want policy Block (the quota's label) and priority 1000", q.Spec)
	}
	if q.Labels[CreatedByLabel] != "ns-a" {
		t.Errorf("created-by label %q, want the quota's namespace ns-a", q.Labels[CreatedByLabel])
	}
	want := map[string]string{"koord-queue/max-depth": "5", "scheduling.x-k8s.io/copied-annotations": "koord-queue/max-depth"}
	if diff := cmp.Diff(want, q.Annotations); diff != "" {
		t.Errorf("annotations copied, koord-queue/ ones only, and recorded (-want +got):\n%s", diff)
	}
	ns := &corev1.Namespace{}
	if err := h.client.Get(context.Background(), client.ObjectKey{Name: schedv1alpha1.QueueNamespace}, ns); err != nil {
		t.Errorf("namespace %s not made: %v", schedv1alpha1.QueueNamespace, err)
	}
}

func TestSyncQueueDefaultsThePolicyAndFollowsTheQuota(t *testing.T) {
	eq := utiltesting.MakeElasticQuota("team-a").Max(corev1.ResourceCPU, "4").Annotation("koord-queue/max-depth", "5").Obj()
	p, h := newTestPlugin(t, nil, eq)
	if err := p.follow.syncQueue(context.Background(), "team-a"); err != nil {
		t.Fatal(err)
	}
	if q := getQueue(t, h, "team-a"); q == nil || q.Spec.QueuePolicy != schedv1alpha1.QueuePolicyPriority {
		t.Fatalf("Queue %+v; want policy Priority when the quota names none", q)
	}
	changed := eq.DeepCopy()
	changed.Labels = map[string]string{schedv1alpha1.QueuePolicyLabel: string(schedv1alpha1.QueuePolicyIntelligent)}
	changed.Annotations = map[string]string{"koord-queue/priority-threshold": "7"}
	p.follow.onQuota(changed)
	if err := p.follow.syncQueue(context.Background(), "team-a"); err != nil {
		t.Fatal(err)
	}
	q := getQueue(t, h, "team-a")
	if q.Spec.QueuePolicy != schedv1alpha1.QueuePolicyIntelligent {
		t.Errorf("policy %s after the quota's label changed, want Intelligent", q.Spec.QueuePolicy)
	}
	want := map[string]string{"koord-queue/priority-threshold": "7", "scheduling.x-k8s.io/copied-annotations": "koord-queue/priority-threshold"}
	if diff := cmp.Diff(want, q.Annotations); diff != "" {
		t.Errorf("annotations follow the quota's (-want +got):\n%s", diff)
	}
}

// The quota is the source of the koord-queue/* keys it sets; one written by
// hand on its Queue stays; one the quota drops goes; removing the policy
// label returns the Queue to Priority.
func TestSyncQueueKeepsHandWrittenKeysAndFollowsRemovals(t *testing.T) {
	eq := utiltesting.MakeElasticQuota("team-a").Max(corev1.ResourceCPU, "4").Policy(schedv1alpha1.QueuePolicyBlock).
		Annotation("koord-queue/max-depth", "5").Annotation("koord-queue/priority-threshold", "6").Obj()
	p, h := newTestPlugin(t, nil, eq)
	ctx := context.Background()
	sync := func(eq *eqv1alpha1.ElasticQuota) *schedv1alpha1.Queue {
		t.Helper()
		p.follow.onQuota(eq)
		if err := p.follow.syncQueue(ctx, "team-a"); err != nil {
			t.Fatal(err)
		}
		return getQueue(t, h, "team-a")
	}
	q := sync(eq)

	// An operator tunes the Queue by hand, and overrides a key the quota sets.
	q.Annotations["koord-queue/wait-for-pods-running"] = "true"
	q.Annotations["koord-queue/max-depth"] = "50"
	q.Annotations["team"] = "ml"
	if err := h.client.Update(ctx, q); err != nil {
		t.Fatal(err)
	}
	q = sync(eq.DeepCopy())
	want := map[string]string{
		"koord-queue/max-depth": "5", "koord-queue/priority-threshold": "6",
		"koord-queue/wait-for-pods-running": "true", "team": "ml",
		"scheduling.x-k8s.io/copied-annotations": "koord-queue/max-depth,koord-queue/priority-threshold",
	}
	if diff := cmp.Diff(want, q.Annotations); diff != "" {
		t.Errorf("after a hand edit: the quota's keys win, the others stay (-want +got):\n%s", diff)
	}

	// The quota drops a key and its policy label.
	dropped := eq.DeepCopy()
	delete(dropped.Annotations, "koord-queue/max-depth")
	delete(dropped.Labels, schedv1alpha1.QueuePolicyLabel)
	q = sync(dropped)
	want = map[string]string{
		"koord-queue/priority-threshold": "6", "koord-queue/wait-for-pods-running": "true", "team": "ml",
		"scheduling.x-k8s.io/copied-annotations": "koord-queue/priority-threshold",
	}
	if diff := cmp.Diff(want, q.Annotations); diff != "" {
		t.Errorf("after the quota dropped max-depth (-want +got):\n%s", diff)
	}
	if q.Spec.QueuePolicy != schedv1alpha1.QueuePolicyPriority {
		t.Errorf("policy %s after the quota's label was removed, want Priority", q.Spec.QueuePolicy)
	}

	// A label that is no policy keeps the Queue's policy.
	bad := dropped.DeepCopy()
	bad.Labels = map[string]string{schedv1alpha1.QueuePolicyLabel: "Block"}
	if q = sync(bad); q.Spec.QueuePolicy != schedv1alpha1.QueuePolicyBlock {
		t.Fatalf("policy %s, want Block", q.Spec.QueuePolicy)
	}
	bad.Labels[schedv1alpha1.QueuePolicyLabel] = "Fifo"
	if q = sync(bad.DeepCopy()); q.Spec.QueuePolicy != schedv1alpha1.QueuePolicyBlock {
		t.Errorf("policy %s after an invalid label, want Block kept", q.Spec.QueuePolicy)
	}
}

// A Queue made before the copied keys were recorded got all its koord-queue/*
// keys from the quota: those the quota no longer sets go.
func TestSyncQueueWithoutARecordTakesEveryKeyAsCopied(t *testing.T) {
	eq := utiltesting.MakeElasticQuota("team-a").Max(corev1.ResourceCPU, "4").Annotation("koord-queue/max-depth", "5").Obj()
	old := utiltesting.MakeQueue("team-a").Policy(schedv1alpha1.QueuePolicyPriority).Obj()
	old.Namespace = schedv1alpha1.QueueNamespace
	old.Labels = map[string]string{CreatedByLabel: "default"}
	old.Annotations = map[string]string{"koord-queue/max-depth": "5", "koord-queue/priority-threshold": "6"}
	h := newTestHandle(old)
	p := newPlugin(&configv1.ElasticQuotaArgs{}, h)
	t.Cleanup(p.follow.queue.ShutDown)
	p.follow.onQuota(eq)
	if err := p.follow.syncQueue(context.Background(), "team-a"); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"koord-queue/max-depth": "5", "scheduling.x-k8s.io/copied-annotations": "koord-queue/max-depth"}
	if diff := cmp.Diff(want, getQueue(t, h, "team-a").Annotations); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSyncQueueLeavesAHandWrittenQueueAlone(t *testing.T) {
	own := utiltesting.MakeQueue("team-a").Policy(schedv1alpha1.QueuePolicyBlock).Obj()
	own.Namespace = schedv1alpha1.QueueNamespace
	h := newTestHandle(own)
	p := newPlugin(&configv1.ElasticQuotaArgs{}, h)
	t.Cleanup(p.follow.queue.ShutDown)
	p.follow.onQuota(utiltesting.MakeElasticQuota("team-a").Policy(schedv1alpha1.QueuePolicyIntelligent).Max(corev1.ResourceCPU, "1").Obj())
	if err := p.follow.syncQueue(context.Background(), "team-a"); err != nil {
		t.Fatal(err)
	}
	if q := getQueue(t, h, "team-a"); q.Spec.QueuePolicy != schedv1alpha1.QueuePolicyBlock {
		t.Errorf("a Queue written by hand was changed to %s", q.Spec.QueuePolicy)
	}
	// Nor is it deleted with the quota.
	p.follow.onQuotaDelete(utiltesting.MakeElasticQuota("team-a").Obj())
	if err := p.follow.syncQueue(context.Background(), "team-a"); err != nil {
		t.Fatal(err)
	}
	if getQueue(t, h, "team-a") == nil {
		t.Error("a Queue written by hand was deleted with the quota")
	}
}

func TestQuotaDeletedDeletesItsQueue(t *testing.T) {
	eq := utiltesting.MakeElasticQuota("team-a").Max(corev1.ResourceCPU, "4").Obj()
	p, h := newTestPlugin(t, nil, eq)
	if err := p.follow.syncQueue(context.Background(), "team-a"); err != nil {
		t.Fatal(err)
	}
	before := h.invalidations()
	// The informer may hand over a tombstone.
	p.follow.onQuotaDelete(toolscache.DeletedFinalStateUnknown{Key: "default/team-a", Obj: eq})
	if h.invalidations() == before {
		t.Error("deleting a quota did not make waiting units worth trying again")
	}
	if s := p.Filter(context.Background(), unit("u", "team-a", 0, 1)); s.IsSuccess() {
		t.Error("a unit of a deleted quota fits")
	}
	if err := p.follow.syncQueue(context.Background(), "team-a"); err != nil {
		t.Fatal(err)
	}
	if getQueue(t, h, "team-a") != nil {
		t.Error("the Queue of a deleted quota is still there")
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

func TestOnQueueQueuesOnlyItsNamespace(t *testing.T) {
	p, _ := newTestPlugin(t, nil)
	other := utiltesting.MakeQueue("elsewhere").Obj()
	other.Namespace = "default"
	p.follow.onQueue(other)
	mine := utiltesting.MakeQueue("team-a").Obj()
	mine.Namespace = schedv1alpha1.QueueNamespace
	p.follow.onQueue(toolscache.DeletedFinalStateUnknown{Obj: mine})
	if p.follow.queue.Len() != 1 {
		t.Fatalf("%d names queued, want 1 (the Queue of namespace %s)", p.follow.queue.Len(), schedv1alpha1.QueueNamespace)
	}
	if name, _ := p.follow.queue.Get(); name != "team-a" {
		t.Errorf("queued %q, want team-a", name)
	}
}

// TestWarningsAreReportedOnce checks the Warning events of syncQueue: a
// broken tree, children's min above the parent's, a bad shared weight, a
// bad namespaces list and a bad policy, each said once.
func TestWarningsAreReportedOnce(t *testing.T) {
	quotas := []*quotaObj{
		utiltesting.MakeElasticQuota("orphan").Parent("missing").Max(corev1.ResourceCPU, "1").Obj(),
		utiltesting.MakeElasticQuota("parent").IsParent(true).Min(corev1.ResourceCPU, "2").Max(corev1.ResourceCPU, "8").Obj(),
		utiltesting.MakeElasticQuota("kid-1").Parent("parent").Min(corev1.ResourceCPU, "2").Max(corev1.ResourceCPU, "4").Obj(),
		utiltesting.MakeElasticQuota("kid-2").Parent("parent").Min(corev1.ResourceCPU, "1").Max(corev1.ResourceCPU, "4").Obj(),
		utiltesting.MakeElasticQuota("weights").Max(corev1.ResourceCPU, "1").Annotation(eqv1alpha1.SharedWeightAnnotation, "lots").Obj(),
		utiltesting.MakeElasticQuota("names").Max(corev1.ResourceCPU, "1").Annotation(eqv1alpha1.NamespacesAnnotation, "team-b").Obj(),
		utiltesting.MakeElasticQuota("policy").Max(corev1.ResourceCPU, "1").Label(schedv1alpha1.QueuePolicyLabel, "Fastest").Obj(),
	}
	p, h := newTestPlugin(t, nil, quotas...)
	want := map[string]string{
		"orphan":  "InvalidQuotaTree",
		"parent":  "InvalidQuotaMin",
		"weights": "InvalidSharedWeight",
		"names":   "InvalidNamespaces",
		"policy":  "InvalidQueuePolicy",
	}
	for name, reason := range want {
		if err := p.follow.syncQueue(context.Background(), name); err != nil {
			t.Fatal(err)
		}
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
		if err := p.follow.syncQueue(context.Background(), name); err != nil {
			t.Fatal(err)
		}
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

// TestNewWatchesQuotasAndQueues builds the plugin through its factory on fake
// informers: their events reach the plugin, it is synced once the
// ElasticQuota informer is, and its worker makes the Queue of a new quota.
func TestNewWatchesQuotasAndQueues(t *testing.T) {
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
	quotaInformer.Add(utiltesting.MakeElasticQuota("team-a").Max(corev1.ResourceCPU, "2").Obj())
	// oversellRate 2 came through the factory: 4 CPUs fit a max of 2.
	if s := p.Filter(context.Background(), unit("u", "team-a", 0, 4)); !s.IsSuccess() {
		t.Errorf("the quota added through the informer did not take: %+v", s)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return getQueue(t, h, "team-a") != nil, nil
	}); err != nil {
		t.Fatalf("the worker made no Queue for the new quota: %v", err)
	}
}
