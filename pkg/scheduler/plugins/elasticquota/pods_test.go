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
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/quota/foreign"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

// runningPod is a pod of namespace ns bound to a node and running, asking
// for cpus CPUs, with the given labels.
func runningPod(ns, name string, cpus string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "c",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpus)}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

// feedPod hands the plugin a pod as the informer would, slimmed as the
// cache slims it.
func feedPod(t *testing.T, p *Plugin, pod *corev1.Pod) {
	t.Helper()
	slim, err := foreign.Slim(pod.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	p.onPod(slim)
}

func foreignCPU(t *testing.T, p *Plugin, name schedtypes.QuotaName) int64 {
	t.Helper()
	for _, q := range p.ListQuotas() {
		if q.Name == name {
			return q.Foreign[corev1.ResourceCPU]
		}
	}
	t.Fatalf("quota %s not listed", name)
	return 0
}

func TestPlainPodCountsAgainstItsQuota(t *testing.T) {
	p, h := newTestPlugin(t, nil, twoTeams()...)
	// The case: a plain 2-CPU pod of team-a runs, then a 4-CPU job
	// of team-a (max 4) comes.
	feedPod(t, p, runningPod("default", "plain", "2", map[string]string{schedv1alpha1.QuotaNameLabel: "team-a"}))
	if got := usedCPU(t, p, "team-a"); got != 2000 {
		t.Fatalf("team-a uses %dm CPU with a 2-CPU plain pod running, want 2000m", got)
	}
	s := p.Filter(context.Background(), unit("big", "team-a", 0, 4))
	if s.IsSuccess() {
		t.Fatal("a 4-CPU unit of team-a (max 4) was let through beside a 2-CPU plain pod of team-a")
	}
	if s.Reason.String() != "short/team-a/cpu" || !strings.Contains(s.Message, "by pods koord-queue does not manage") {
		t.Errorf("refusal = %q %q; want short/team-a/cpu naming the pods koord-queue does not manage", s.Reason, s.Message)
	}
	if s := p.Filter(context.Background(), unit("small", "team-a", 0, 2)); !s.IsSuccess() {
		t.Errorf("a 2-CPU unit of team-a beside a 2-CPU plain pod (max 4) was refused: %s", s.Message)
	}
	// The parent counts it too: team-b may borrow only what is left of org.
	if got := usedCPU(t, p, "org"); got != 2000 {
		t.Errorf("org uses %dm CPU, want the plain pod's 2000m", got)
	}

	h.takeFreed()
	p.onPodDelete(runningPod("default", "plain", "2", nil))
	if got := foreignCPU(t, p, "team-a"); got != 0 {
		t.Errorf("team-a's foreign usage after the pod went = %dm, want 0", got)
	}
	if freed := h.takeFreed(); !slices.Contains(freed, "org") {
		t.Errorf("freed cohorts after the plain pod went = %v, want org: its waiting units must be tried again", freed)
	}
	if s := p.Filter(context.Background(), unit("big", "team-a", 0, 4)); !s.IsSuccess() {
		t.Errorf("the 4-CPU unit is still refused after the plain pod went: %s", s.Message)
	}
}

func TestPodsThatDoNotUseQuotaAreNotCounted(t *testing.T) {
	p, _ := newTestPlugin(t, nil, twoTeams()...)
	label := map[string]string{schedv1alpha1.QuotaNameLabel: "team-a"}
	pending := runningPod("default", "pending", "1", label)
	pending.Spec.NodeName, pending.Status.Phase = "", corev1.PodPending
	done := runningPod("default", "done", "1", label)
	done.Status.Phase = corev1.PodSucceeded
	failed := runningPod("default", "failed", "1", label)
	failed.Status.Phase = corev1.PodFailed
	other := runningPod("elsewhere", "unlabelled", "1", nil) // koordinator-default-quota
	system := runningPod("kube-system", "dns", "1", map[string]string{schedv1alpha1.QuotaNameLabel: eqv1alpha1.SystemQuotaName})
	for _, pod := range []*corev1.Pod{pending, done, failed, other, system} {
		feedPod(t, p, pod)
	}
	if got := usedCPU(t, p, "team-a"); got != 0 {
		t.Errorf("team-a uses %dm CPU; unbound, finished and other quotas' pods must not count", got)
	}
	// The pending pod is bound and starts: now it counts; then it ends.
	pending.Spec.NodeName, pending.Status.Phase = "node-1", corev1.PodRunning
	feedPod(t, p, pending)
	if got := usedCPU(t, p, "team-a"); got != 1000 {
		t.Errorf("team-a uses %dm CPU once the pod runs, want 1000m", got)
	}
	pending.Status.Phase = corev1.PodSucceeded
	feedPod(t, p, pending)
	if got := usedCPU(t, p, "team-a"); got != 0 {
		t.Errorf("team-a uses %dm CPU once the pod succeeded, want 0", got)
	}
}

func TestUnitPodsAreNotCountedTwice(t *testing.T) {
	p, _ := newTestPlugin(t, nil, twoTeams()...)
	u := unit("job", "team-a", 0, 4)
	p.SetUsage(u.Key, holding(u, time.Time{}))
	labels := map[string]string{schedv1alpha1.QuotaNameLabel: "team-a", schedv1alpha1.QueueUnitLabel: "job"}
	for _, name := range []string{"job-0", "job-1"} {
		feedPod(t, p, runningPod("default", name, "2", labels))
	}
	if got := usedCPU(t, p, "team-a"); got != 4000 {
		t.Fatalf("team-a uses %dm CPU with its 4-CPU unit running in two 2-CPU pods, want 4000m (once)", got)
	}
	// The unit gave its quota back but its pods run on (nothing evicted
	// them yet): they use the quota, and koord-scheduler counts them.
	p.SetUsage(u.Key, nil)
	if got, want := usedCPU(t, p, "team-a"), int64(4000); got != want {
		t.Errorf("team-a uses %dm CPU after the unit let go while its pods run, want %dm", got, want)
	}
	if got := foreignCPU(t, p, "team-a"); got != 4000 {
		t.Errorf("team-a's foreign usage = %dm, want the running pods' 4000m", got)
	}
	// Its pods are terminating: on their way out, they count no more.
	for _, name := range []string{"job-0", "job-1"} {
		pod := runningPod("default", name, "2", labels)
		pod.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		feedPod(t, p, pod)
	}
	if got := usedCPU(t, p, "team-a"); got != 0 {
		t.Errorf("team-a uses %dm CPU with only terminating pods of a released unit, want 0", got)
	}
	// Admitted again: the same pods (say, not yet gone) are the unit's.
	for _, name := range []string{"job-0", "job-1"} {
		feedPod(t, p, runningPod("default", name, "2", labels))
	}
	p.SetUsage(u.Key, holding(u, time.Time{}))
	if got := usedCPU(t, p, "team-a"); got != 4000 {
		t.Errorf("team-a uses %dm CPU once the unit holds quota again beside its pods, want 4000m", got)
	}
}

// Pods started before their job's pods were labelled with the unit (a job
// Koord-Queue v1.8 resumed, then upgraded) name no unit; they are their
// unit's by their controller, the job of the unit's consumerRef, whichever
// of the pod and the unit's charge comes first.
func TestUnlabelledPodsOfAUnitsJobAreNotCountedTwice(t *testing.T) {
	p, _ := newTestPlugin(t, nil, twoTeams()...)
	const jobUID = "uid-of-job"
	u := unit("job", "team-a", 0, 2)
	h := holding(u, time.Time{})
	h.Consumer = jobUID
	owned := func(name, owner string) *corev1.Pod {
		pod := runningPod("default", name, "2", map[string]string{schedv1alpha1.QuotaNameLabel: "team-a"})
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "job",
			UID: types.UID(owner), Controller: ptr.To(true)}}
		return pod
	}
	// The pod first, as a restarted scheduler's informers may see it.
	feedPod(t, p, owned("job-0", jobUID))
	if got := usedCPU(t, p, "team-a"); got != 2000 {
		t.Fatalf("team-a uses %dm CPU with a 2-CPU pod of no unit, want 2000m", got)
	}
	p.SetUsage(u.Key, h)
	if got := usedCPU(t, p, "team-a"); got != 2000 {
		t.Fatalf("team-a uses %dm CPU with its 2-CPU unit running in an unlabelled pod of its job, want 2000m (once)", got)
	}
	// A pod of another owner is not the unit's.
	feedPod(t, p, owned("other-0", "uid-of-another-job"))
	if got := foreignCPU(t, p, "team-a"); got != 2000 {
		t.Errorf("team-a's foreign usage = %dm with another job's pod, want its 2000m", got)
	}
	// The unit let go while its job's pod runs on: the pod counts.
	p.SetUsage(u.Key, nil)
	if got := foreignCPU(t, p, "team-a"); got != 4000 {
		t.Errorf("team-a's foreign usage = %dm after the unit let go, want both running pods' 4000m", got)
	}
	// The unit's charge first, then its job's pod.
	p.SetUsage(u.Key, h)
	feedPod(t, p, owned("job-1", jobUID))
	if got := usedCPU(t, p, "team-a"); got != 4000 {
		t.Errorf("team-a uses %dm CPU (unit 2 CPUs, its job's two pods, another job's 2-CPU pod), want 4000m", got)
	}
}

func TestPodsAreChargedByKoordinatorsRule(t *testing.T) {
	quotas := append(twoTeams(),
		utiltesting.MakeElasticQuota("team-c").Namespace("ns-c").Max(corev1.ResourceCPU, "4").
			Annotation(eqv1alpha1.NamespacesAnnotation, `["shared"]`).Obj())
	p, _ := newTestPlugin(t, nil, quotas...)
	// An unlabelled pod of a namespace the quota lists is charged to it;
	// a pod labelled with a quota that does not exist goes to the default.
	feedPod(t, p, runningPod("shared", "a", "1", nil))
	feedPod(t, p, runningPod("shared", "b", "1", map[string]string{schedv1alpha1.QuotaNameLabel: "nope"}))
	if got := usedCPU(t, p, "team-c"); got != 1000 {
		t.Errorf("team-c uses %dm CPU, want 1000m: the unlabelled pod of namespace shared, which it lists", got)
	}
	// The annotation goes: the pod is no longer charged to team-c.
	p.follow.onQuota(utiltesting.MakeElasticQuota("team-c").Namespace("ns-c").Max(corev1.ResourceCPU, "4").Obj())
	if got := usedCPU(t, p, "team-c"); got != 0 {
		t.Errorf("team-c uses %dm CPU after it stopped listing namespace shared, want 0", got)
	}
}

func TestKoordinatorsOwnAndParentQuotasAdmitNoUnit(t *testing.T) {
	quotas := append(twoTeams(),
		utiltesting.MakeElasticQuota(eqv1alpha1.RootQuotaName).Namespace(eqv1alpha1.SystemQuotaNamespace).Obj(),
		utiltesting.MakeElasticQuota(eqv1alpha1.DefaultQuotaName).Namespace(eqv1alpha1.SystemQuotaNamespace).
			Parent(eqv1alpha1.RootQuotaName).Max(corev1.ResourceCPU, "1000").Obj())
	p, _ := newTestPlugin(t, nil, quotas...)
	for _, tc := range []struct {
		quota  schedtypes.QuotaName
		reason string
	}{
		{eqv1alpha1.DefaultQuotaName, "system/" + eqv1alpha1.DefaultQuotaName},
		{eqv1alpha1.RootQuotaName, "system/" + eqv1alpha1.RootQuotaName},
		{"org", "parent/org"},
	} {
		s := p.Filter(context.Background(), unit("u", tc.quota, 0, 1))
		if s.IsSuccess() || s.Code != framework.UnschedulableAndUnresolvable || s.Reason.String() != tc.reason {
			t.Errorf("Filter of a unit of %s = %+v; want UnschedulableAndUnresolvable %s", tc.quota, s, tc.reason)
		}
	}
	// A quota becomes a parent by its label alone, before any child names it.
	p.follow.onQuota(utiltesting.MakeElasticQuota("solo").IsParent(true).Max(corev1.ResourceCPU, "4").Obj())
	if s := p.Filter(context.Background(), unit("u", "solo", 0, 1)); s.IsSuccess() || s.Reason.String() != "parent/solo" {
		t.Errorf("Filter of a unit of a quota labelled is-parent = %+v; want parent/solo", s)
	}
	p.follow.onQuota(utiltesting.MakeElasticQuota("solo").Max(corev1.ResourceCPU, "4").Obj())
	if s := p.Filter(context.Background(), unit("u", "solo", 0, 1)); !s.IsSuccess() {
		t.Errorf("Filter of a unit of a quota no longer labelled is-parent = %+v; want admitted", s)
	}
}

func TestNoReportsOnKoordinatorsOwnQuotas(t *testing.T) {
	root := utiltesting.MakeElasticQuota(eqv1alpha1.RootQuotaName).Namespace(eqv1alpha1.SystemQuotaNamespace).Obj()
	// Under the root, with children's min above its own: not said.
	def := utiltesting.MakeElasticQuota(eqv1alpha1.DefaultQuotaName).Namespace(eqv1alpha1.SystemQuotaNamespace).
		Parent(eqv1alpha1.RootQuotaName).Max(corev1.ResourceCPU, "1000").Annotation(eqv1alpha1.SharedWeightAnnotation, "lots").Obj()
	kid := utiltesting.MakeElasticQuota("kid").Parent(eqv1alpha1.RootQuotaName).Min(corev1.ResourceCPU, "1").Max(corev1.ResourceCPU, "1").Obj()
	p, h := newTestPlugin(t, nil, root, def, kid)
	for _, q := range []*quotaObj{root, def} {
		p.follow.report(q.Name)
	}
	if ev := h.events(); len(ev) > 0 {
		t.Errorf("events on Koordinator's own quotas: %v; want none", ev)
	}
}

func TestSharedWeightEqualToMaxAsksNoWeightedSharing(t *testing.T) {
	weighted := func(w string) *quotaObj {
		return utiltesting.MakeElasticQuota("team-a").Max(corev1.ResourceCPU, "4").Annotation(eqv1alpha1.SharedWeightAnnotation, w).Obj()
	}
	p, _ := newTestPlugin(t, nil, weighted(`{"cpu":"4"}`))
	if p.Sharing() {
		t.Error("a shared-weight equal to the max (what Koordinator's webhook writes) turned weighted sharing on")
	}
	p.follow.onQuota(weighted(`{"cpu":"2"}`))
	if !p.Sharing() {
		t.Error("a shared-weight other than the max did not turn weighted sharing on")
	}
}

func TestPodInformerTombstone(t *testing.T) {
	p, _ := newTestPlugin(t, nil, twoTeams()...)
	pod := runningPod("default", "plain", "1", map[string]string{schedv1alpha1.QuotaNameLabel: "team-a"})
	feedPod(t, p, pod)
	p.onPodDelete(toolscache.DeletedFinalStateUnknown{Key: "default/plain", Obj: pod})
	if got := usedCPU(t, p, "team-a"); got != 0 {
		t.Errorf("team-a uses %dm CPU after the pod's tombstone, want 0", got)
	}
}
