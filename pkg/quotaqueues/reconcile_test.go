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

package quotaqueues

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// world is a controller on a fake client and recorder, fed quotas as its
// ElasticQuota handler would be.
type world struct {
	c        *Controller
	client   client.Client
	recorder *record.FakeRecorder
}

func newWorld(t *testing.T, objs ...client.Object) *world {
	t.Helper()
	w := &world{client: fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).Build(), recorder: record.NewFakeRecorder(100)}
	w.c = New(w.client, w.recorder)
	t.Cleanup(w.c.queue.ShutDown)
	return w
}

// sync feeds the controller eq (as an informer event) and reconciles its name.
func (w *world) sync(t *testing.T, eq *eqv1alpha1.ElasticQuota) *schedv1alpha1.Queue {
	t.Helper()
	w.c.onQuota(eq)
	return w.reconcile(t, eq.Name)
}

func (w *world) reconcile(t *testing.T, name string) *schedv1alpha1.Queue {
	t.Helper()
	if err := w.c.Reconcile(context.Background(), name); err != nil {
		t.Fatal(err)
	}
	return w.queue(t, name)
}

// queue reads the Queue of quota name; nil when there is none.
func (w *world) queue(t *testing.T, name string) *schedv1alpha1.Queue {
	t.Helper()
	q := &schedv1alpha1.Queue{}
	err := w.client.Get(context.Background(), client.ObjectKey{Namespace: schedv1alpha1.QueueNamespace, Name: name}, q)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// events drains the events recorded so far.
func (w *world) events() []string {
	var out []string
	for {
		select {
		case e := <-w.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestReconcileCreatesTheQueueOfAQuota(t *testing.T) {
	eq := utiltesting.MakeElasticQuota("team-a").Namespace("ns-a").Max(corev1.ResourceCPU, "4").
		Policy(schedv1alpha1.QueuePolicyBlock).Annotation("koord-queue/max-depth", "5").Annotation("other/x", "y").Obj()
	w := newWorld(t)
	q := w.sync(t, eq)
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
	if err := w.client.Get(context.Background(), client.ObjectKey{Name: schedv1alpha1.QueueNamespace}, ns); err != nil {
		t.Errorf("namespace %s not made: %v", schedv1alpha1.QueueNamespace, err)
	}
}

func TestReconcileDefaultsThePolicyAndFollowsTheQuota(t *testing.T) {
	eq := utiltesting.MakeElasticQuota("team-a").Max(corev1.ResourceCPU, "4").Annotation("koord-queue/max-depth", "5").Obj()
	w := newWorld(t)
	if q := w.sync(t, eq); q == nil || q.Spec.QueuePolicy != schedv1alpha1.QueuePolicyPriority {
		t.Fatalf("Queue %+v; want policy Priority when the quota names none", q)
	}
	changed := eq.DeepCopy()
	changed.Labels = map[string]string{schedv1alpha1.QueuePolicyLabel: string(schedv1alpha1.QueuePolicyIntelligent)}
	changed.Annotations = map[string]string{"koord-queue/priority-threshold": "7"}
	q := w.sync(t, changed)
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
func TestReconcileKeepsHandWrittenKeysAndFollowsRemovals(t *testing.T) {
	eq := utiltesting.MakeElasticQuota("team-a").Max(corev1.ResourceCPU, "4").Policy(schedv1alpha1.QueuePolicyBlock).
		Annotation("koord-queue/max-depth", "5").Annotation("koord-queue/priority-threshold", "6").Obj()
	w := newWorld(t)
	q := w.sync(t, eq)
	// An operator tunes the Queue by hand, and overrides a key the quota sets.
	q.Annotations["koord-queue/wait-for-pods-running"] = "true"
	q.Annotations["koord-queue/max-depth"] = "50"
	q.Annotations["team"] = "ml"
	if err := w.client.Update(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	q = w.sync(t, eq.DeepCopy())
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
	q = w.sync(t, dropped)
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
	// A label that is no policy keeps the Queue's policy, and is reported.
	bad := dropped.DeepCopy()
	bad.Labels = map[string]string{schedv1alpha1.QueuePolicyLabel: "Block"}
	if q = w.sync(t, bad); q.Spec.QueuePolicy != schedv1alpha1.QueuePolicyBlock {
		t.Fatalf("policy %s, want Block", q.Spec.QueuePolicy)
	}
	w.events()
	bad.Labels[schedv1alpha1.QueuePolicyLabel] = "Fifo"
	if q = w.sync(t, bad.DeepCopy()); q.Spec.QueuePolicy != schedv1alpha1.QueuePolicyBlock {
		t.Errorf("policy %s after an invalid label, want Block kept", q.Spec.QueuePolicy)
	}
	if ev := w.events(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning InvalidQueuePolicy ") {
		t.Errorf("events %q; want one Warning InvalidQueuePolicy", ev)
	}
}

// A Queue made before the copied keys were recorded got all its koord-queue/*
// keys from the quota: those the quota no longer sets go.
func TestReconcileWithoutARecordTakesEveryKeyAsCopied(t *testing.T) {
	eq := utiltesting.MakeElasticQuota("team-a").Max(corev1.ResourceCPU, "4").Annotation("koord-queue/max-depth", "5").Obj()
	old := utiltesting.MakeQueue("team-a").Policy(schedv1alpha1.QueuePolicyPriority).Obj()
	old.Namespace = schedv1alpha1.QueueNamespace
	old.Labels = map[string]string{CreatedByLabel: "default"}
	old.Annotations = map[string]string{"koord-queue/max-depth": "5", "koord-queue/priority-threshold": "6"}
	w := newWorld(t, old)
	want := map[string]string{"koord-queue/max-depth": "5", "scheduling.x-k8s.io/copied-annotations": "koord-queue/max-depth"}
	if diff := cmp.Diff(want, w.sync(t, eq).Annotations); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestReconcileLeavesAHandWrittenQueueAlone(t *testing.T) {
	own := utiltesting.MakeQueue("team-a").Policy(schedv1alpha1.QueuePolicyBlock).Obj()
	own.Namespace = schedv1alpha1.QueueNamespace
	w := newWorld(t, own)
	eq := utiltesting.MakeElasticQuota("team-a").Policy(schedv1alpha1.QueuePolicyIntelligent).Max(corev1.ResourceCPU, "1").Obj()
	if q := w.sync(t, eq); q.Spec.QueuePolicy != schedv1alpha1.QueuePolicyBlock {
		t.Errorf("a Queue written by hand was changed to %s", q.Spec.QueuePolicy)
	}
	// Nor is it deleted with the quota.
	w.c.onQuotaDelete(eq)
	if w.reconcile(t, "team-a") == nil {
		t.Error("a Queue written by hand was deleted with the quota")
	}
}

func TestQuotaDeletedDeletesItsQueue(t *testing.T) {
	eq := utiltesting.MakeElasticQuota("team-a").Max(corev1.ResourceCPU, "4").Obj()
	w := newWorld(t)
	if w.sync(t, eq) == nil {
		t.Fatal("no Queue made")
	}
	// The informer may hand over a tombstone.
	w.c.onQuotaDelete(toolscache.DeletedFinalStateUnknown{Key: "default/team-a", Obj: eq})
	if w.reconcile(t, "team-a") != nil {
		t.Error("the Queue of a deleted quota is still there")
	}
	// Objects of other kinds are ignored.
	w.c.onQuota(&corev1.Pod{})
	w.c.onQuotaDelete(&corev1.Pod{})
}

func TestNoQueueForKoordinatorsOwnQuotas(t *testing.T) {
	root := utiltesting.MakeElasticQuota(eqv1alpha1.RootQuotaName).Namespace(eqv1alpha1.SystemQuotaNamespace).Obj()
	// A Queue made by an earlier version goes.
	old := &schedv1alpha1.Queue{ObjectMeta: metav1.ObjectMeta{Namespace: schedv1alpha1.QueueNamespace, Name: eqv1alpha1.DefaultQuotaName,
		Labels: map[string]string{CreatedByLabel: eqv1alpha1.SystemQuotaNamespace}}}
	def := utiltesting.MakeElasticQuota(eqv1alpha1.DefaultQuotaName).Namespace(eqv1alpha1.SystemQuotaNamespace).
		Parent(eqv1alpha1.RootQuotaName).Max(corev1.ResourceCPU, "1000").Obj()
	w := newWorld(t, old)
	for _, eq := range []*eqv1alpha1.ElasticQuota{root, def} {
		if q := w.sync(t, eq); q != nil {
			t.Errorf("Koordinator's quota %s has a Queue", eq.Name)
		}
	}
	if ev := w.events(); len(ev) > 0 {
		t.Errorf("events on Koordinator's own quotas: %v; want none", ev)
	}
}

// Of two quotas of one name the oldest counts, as for the plugin.
func TestTheQueueOfANameFollowsTheOldestQuota(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	older := utiltesting.MakeElasticQuota("dup").Namespace("ns-b").Max(corev1.ResourceCPU, "2").Obj()
	older.CreationTimestamp = metav1.NewTime(at)
	newer := utiltesting.MakeElasticQuota("dup").Namespace("ns-a").Max(corev1.ResourceCPU, "8").Obj()
	newer.CreationTimestamp = metav1.NewTime(at.Add(time.Minute))
	for _, order := range [][]*eqv1alpha1.ElasticQuota{{older, newer}, {newer, older}} {
		w := newWorld(t)
		w.c.onQuota(order[0])
		if q := w.sync(t, order[1]); q == nil || q.Labels[CreatedByLabel] != "ns-b" {
			t.Errorf("the Queue of dup = %+v; want one made for ns-b/dup", q)
		}
		// A quota of the name is left: its Queue stays.
		w.c.onQuotaDelete(older)
		if q := w.reconcile(t, "dup"); q == nil {
			t.Error("the Queue of dup went with one of its two quotas")
		}
	}
}

func TestOnQueueQueuesOnlyItsNamespace(t *testing.T) {
	w := newWorld(t)
	other := utiltesting.MakeQueue("elsewhere").Obj()
	other.Namespace = "default"
	w.c.onQueue(other)
	mine := utiltesting.MakeQueue("team-a").Obj()
	mine.Namespace = schedv1alpha1.QueueNamespace
	w.c.onQueue(toolscache.DeletedFinalStateUnknown{Obj: mine})
	if w.c.queue.Len() != 1 {
		t.Fatalf("%d names queued, want 1 (the Queue of namespace %s)", w.c.queue.Len(), schedv1alpha1.QueueNamespace)
	}
	if name, _ := w.c.queue.Get(); name != "team-a" {
		t.Errorf("queued %q, want team-a", name)
	}
}
