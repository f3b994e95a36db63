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

package jobext

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	lwsv1 "sigs.k8s.io/lws/api/leaderworkerset/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	jobframework "github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

// leaderWorkerSet has groups of size pods: a leader of 1 cpu and workers of
// 2 cpu, each worker with an init container of 3 cpu (the larger counts).
func leaderWorkerSet(ns, name string, replicas, size int32) *lwsv1.LeaderWorkerSet {
	leader := template("1")
	worker := template("2")
	worker.Spec.InitContainers = container("3")
	worker.Spec.InitContainers[0].Name = "init"
	return &lwsv1.LeaderWorkerSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: quotaLabels()},
		Spec: lwsv1.LeaderWorkerSetSpec{
			Replicas: ptr.To(replicas),
			// The lws webhook's defaults; envtest runs no lws webhook.
			StartupPolicy:   lwsv1.LeaderCreatedStartupPolicy,
			RolloutStrategy: lwsv1.RolloutStrategy{Type: lwsv1.RollingUpdateStrategyType},
			LeaderWorkerTemplate: lwsv1.LeaderWorkerTemplate{
				Size: ptr.To(size), LeaderTemplate: &leader, WorkerTemplate: worker,
			},
		},
	}
}

// lwsPod plays the lws controller and its pod webhook: pod w of group g,
// made by a StatefulSet from the set's template, with the set's labels.
func lwsPod(l *lwsv1.LeaderWorkerSet, g, w int) *corev1.Pod {
	tmpl := l.Spec.LeaderWorkerTemplate.WorkerTemplate
	name := fmt.Sprintf("%s-%d-%d", l.Name, g, w)
	if w == 0 {
		tmpl = *l.Spec.LeaderWorkerTemplate.LeaderTemplate
		name = fmt.Sprintf("%s-%d", l.Name, g)
	}
	labels := map[string]string{
		lwsv1.SetNameLabelKey: l.Name, lwsv1.GroupIndexLabelKey: strconv.Itoa(g), lwsv1.WorkerIndexLabelKey: strconv.Itoa(w),
	}
	for k, v := range tmpl.Labels {
		labels[k] = v
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: l.Namespace, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "StatefulSet", Name: l.Name, UID: "sts-uid", Controller: ptr.To(true),
			}},
		},
		Spec: *tmpl.Spec.DeepCopy(),
	}
}

// createGroupPods makes the pods of group g and checks they come gated.
func createGroupPods(t *testing.T, c client.Client, l *lwsv1.LeaderWorkerSet, g int) []string {
	t.Helper()
	var names []string
	for w := range int(*l.Spec.LeaderWorkerTemplate.Size) {
		p := lwsPod(l, g, w)
		eventually(t, "create pod "+p.Name, func(ctx context.Context) (bool, error) {
			err := c.Create(ctx, p)
			return err == nil, client.IgnoreAlreadyExists(err)
		})
		if !jobframework.Gated(p) || p.Spec.NodeName != "" {
			t.Fatalf("pod %s created with gates %v node %q, want the queue's gate", p.Name, p.Spec.SchedulingGates, p.Spec.NodeName)
		}
		names = append(names, p.Name)
	}
	return names
}

func waitPodsGone(t *testing.T, c client.Client, ns string, names ...string) {
	t.Helper()
	for _, n := range names {
		eventually(t, "pod "+n+" deleted", func(ctx context.Context) (bool, error) {
			err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: n}, &corev1.Pod{})
			return err != nil, client.IgnoreNotFound(err)
		})
	}
}

func updateSet(t *testing.T, c client.Client, ns, name string, change func(*lwsv1.LeaderWorkerSet)) {
	t.Helper()
	eventually(t, "update of "+name, func(ctx context.Context) (bool, error) {
		l := &lwsv1.LeaderWorkerSet{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, l); err != nil {
			return false, err
		}
		change(l)
		return true, c.Update(ctx, l)
	})
}

func podSetCounts(u *schedv1alpha1.QueueUnit) string {
	s := ""
	for _, ps := range u.Spec.PodSet {
		s += fmt.Sprintf("%s=%d ", ps.Name, ps.Count)
	}
	return s
}

// TestLeaderWorkerSet: the webhook puts the quota on both templates; each
// group gets a unit (leader 1, workers size-1, requests as the pods get
// them); the pods come gated and are let go with their group only; an
// evicted group's pods are deleted and its unit waits again, its new pods
// gated; scaling up adds a waiting unit and leaves the running group alone;
// scaling down finishes the removed groups' units; a size grown beyond an
// admission deletes the group's pods and queues it again at the new size.
func TestLeaderWorkerSet(t *testing.T) {
	w := startPodsWebhook(t, []string{"job", "leaderworkerset"}, func(ns string) *corev1.Pod {
		p := lwsPod(leaderWorkerSet(ns, "probe", 1, 1), 0, 0)
		p.Labels[schedv1alpha1.QuotaNameLabel] = quota
		return p
	})
	c, ns := w.c, w.ns
	ctx := context.Background()
	l := leaderWorkerSet(ns, "s", 2, 3)
	if err := c.Create(ctx, l); err != nil {
		t.Fatal(err)
	}
	for _, tmpl := range []corev1.PodTemplateSpec{*l.Spec.LeaderWorkerTemplate.LeaderTemplate, l.Spec.LeaderWorkerTemplate.WorkerTemplate} {
		if tmpl.Labels[schedv1alpha1.QuotaNameLabel] != quota {
			t.Fatalf("template labels %v, want the quota %s from the webhook", tmpl.Labels, quota)
		}
	}
	var units []*schedv1alpha1.QueueUnit
	for g := range 2 {
		units = append(units, waitUnit(t, c, ns, fmt.Sprintf("s-%d-leaderworkerset", g), "unit of a group", anyUnit))
	}
	u := units[0]
	if got := podSetCounts(u); got != "leader=1 workers=2 " {
		t.Fatalf("pod sets %s, want a leader and two workers", got)
	}
	// 1 + 2 workers × max(2, init 3).
	if q := u.Spec.Resource[corev1.ResourceCPU]; q.Cmp(resource.MustParse("7")) != 0 {
		t.Errorf("unit cpu = %s, want 7", q.String())
	}
	if ref := u.Spec.ConsumerRef; ref == nil || ref.Kind != "LeaderWorkerSet" || ref.Name != "s" || u.Spec.Queue != quota {
		t.Errorf("consumerRef %+v queue %q", ref, u.Spec.Queue)
	}

	group0 := createGroupPods(t, c, l, 0)
	group1 := createGroupPods(t, c, l, 1)
	admit(t, c, ns, "s-0-leaderworkerset")
	waitUngated(t, c, ns, group0...)
	if got := getPod(t, c, ns, "s-0-1"); got.Labels[schedv1alpha1.QueueUnitLabel] != "s-0-leaderworkerset" {
		t.Errorf("admitted pod labels %v, want its group's unit", got.Labels)
	}
	for _, n := range group1 {
		if !jobframework.Gated(getPod(t, c, ns, n)) {
			t.Fatalf("pod %s of the waiting group was let go", n)
		}
	}

	// Eviction deletes the group's pods; the StatefulSets make them again,
	// held; the unit waits and is admitted again.
	evictUnit(t, c, ns, "s-0-leaderworkerset")
	waitPodsGone(t, c, ns, group0...)
	waitUnit(t, c, ns, "s-0-leaderworkerset", "evicted unit requeued", requeued)
	createGroupPods(t, c, l, 0)
	admit(t, c, ns, "s-0-leaderworkerset")
	waitUngated(t, c, ns, group0...)

	// Scaling up: a new group waits; the running one is untouched.
	updateSet(t, c, ns, "s", func(l *lwsv1.LeaderWorkerSet) { l.Spec.Replicas = ptr.To[int32](3) })
	waitUnit(t, c, ns, "s-2-leaderworkerset", "unit of the added group", anyUnit)
	if p := waitUnit(t, c, ns, "s-0-leaderworkerset", "running group", anyUnit).Status.Phase; p != schedv1alpha1.QueueUnitPhaseDequeued && p != schedv1alpha1.QueueUnitPhaseRunning {
		t.Errorf("running group's unit is %s after scaling up", p)
	}

	// Scaling down: the removed groups' units finish once their pods are gone.
	updateSet(t, c, ns, "s", func(l *lwsv1.LeaderWorkerSet) { l.Spec.Replicas = ptr.To[int32](1) })
	waitUnit(t, c, ns, "s-2-leaderworkerset", "removed group's unit finished", phaseIs(schedv1alpha1.QueueUnitPhaseSucceed))
	for _, n := range group1 {
		if err := c.Delete(ctx, getPod(t, c, ns, n)); err != nil { // the lws controller's part
			t.Fatal(err)
		}
	}
	waitUnit(t, c, ns, "s-1-leaderworkerset", "removed group's unit finished", phaseIs(schedv1alpha1.QueueUnitPhaseSucceed))
	waitPodEvent(t, c, ns, "s", "GroupRemoved", "group 1 was removed")

	// Growth: a bigger group is held back and queued again at its new size.
	updateSet(t, c, ns, "s", func(l *lwsv1.LeaderWorkerSet) { l.Spec.LeaderWorkerTemplate.Size = ptr.To[int32](4) })
	waitPodsGone(t, c, ns, group0...)
	grown := waitUnit(t, c, ns, "s-0-leaderworkerset", "grown group requeued at its new size", func(u *schedv1alpha1.QueueUnit) bool {
		return requeued(u) && podSetCounts(u) == "leader=1 workers=3 "
	})
	if q := grown.Spec.Resource[corev1.ResourceCPU]; q.Cmp(resource.MustParse("10")) != 0 {
		t.Errorf("grown unit cpu = %s, want 10", q.String())
	}
	waitPodEvent(t, c, ns, "s", jobframework.EventJobGrew, "grew from 2 to 3 pods")
}

// TestLeaderWorkerSetBackstop: a set with the quota label created while the
// webhook was away has templates without it, so its pods were never held:
// it runs outside the queue, gets no unit, and is told so.
func TestLeaderWorkerSetBackstop(t *testing.T) {
	c, ns := startManager(t, []string{"leaderworkerset"}, nil)
	ctx := context.Background()
	l := leaderWorkerSet(ns, "early", 1, 2)
	if err := c.Create(ctx, l); err != nil {
		t.Fatal(err)
	}
	waitPodEvent(t, c, ns, "early", jobframework.EventLeftAlone, "run outside the queue")
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "early-0-leaderworkerset"}, &schedv1alpha1.QueueUnit{}); err == nil {
		t.Error("a unit was made for a set whose pods are not held")
	}
	// A set without the quota label is not queued, and not told anything:
	// made before a set that is, it is seen no later than that one.
	plain := leaderWorkerSet(ns, "plain", 1, 1)
	plain.Labels = nil
	if err := c.Create(ctx, plain); err != nil {
		t.Fatal(err)
	}
	late := leaderWorkerSet(ns, "late", 1, 1)
	if err := c.Create(ctx, late); err != nil {
		t.Fatal(err)
	}
	waitPodEvent(t, c, ns, "late", jobframework.EventLeftAlone, "run outside the queue")
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "plain-0-leaderworkerset"}, &schedv1alpha1.QueueUnit{}); err == nil {
		t.Error("a unit was made for a set without the quota label")
	}
}

// TestLeaderWorkerSetManageAll: with --manage-all-jobs and --default-quota
// a set without the quota label gets the default quota on its templates at
// creation, so its pods are held, and its groups' units charge that quota,
// with the namespace's LimitRange defaults as the pods will get them.
func TestLeaderWorkerSetManageAll(t *testing.T) {
	w := startPodsWebhook(t, []string{"job", "leaderworkerset"}, func(ns string) *corev1.Pod {
		p := lwsPod(leaderWorkerSet(ns, "probe", 1, 1), 0, 0)
		p.Labels[schedv1alpha1.QuotaNameLabel] = quota
		return p
	}, func(o *appOptions) { o.ManageAllJobs, o.DefaultQuota = true, "fallback" })
	c, ns := w.c, w.ns
	lr := &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: ns},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer, DefaultRequest: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
		}}},
	}
	if err := c.Create(context.Background(), lr); err != nil {
		t.Fatal(err)
	}
	l := leaderWorkerSet(ns, "swept", 1, 2)
	l.Labels = nil
	if err := c.Create(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	if q := l.Spec.LeaderWorkerTemplate.WorkerTemplate.Labels[schedv1alpha1.QuotaNameLabel]; q != "fallback" {
		t.Fatalf("worker template quota %q, want the default quota", q)
	}
	u := waitUnit(t, c, ns, "swept-0-leaderworkerset", "unit of the swept set", anyUnit)
	if u.Spec.Queue != "fallback" || u.Labels[schedv1alpha1.QuotaNameLabel] != "fallback" {
		t.Errorf("unit queue %q label %q, want the default quota", u.Spec.Queue, u.Labels[schedv1alpha1.QuotaNameLabel])
	}
	// A leader and a worker (its init container too) with 2Gi each.
	if m := u.Spec.Resource[corev1.ResourceMemory]; m.Cmp(resource.MustParse("4Gi")) != 0 {
		t.Errorf("unit memory = %s, want 4Gi from the LimitRange's default request", m.String())
	}
	createGroupPods(t, c, l, 0)
}

// TestLeaderWorkerSetPodWithoutGate: a held set (its templates carry the
// quota label) whose pod was made while the pods webhook was away: the pod
// runs outside the queue and is told so once; the group's unit still waits
// and is admitted as usual, its gated pods let go.
func TestLeaderWorkerSetPodWithoutGate(t *testing.T) {
	c, ns := startManager(t, []string{"leaderworkerset"}, nil)
	ctx := context.Background()
	l := leaderWorkerSet(ns, "held", 1, 2)
	for _, tmpl := range []*corev1.PodTemplateSpec{l.Spec.LeaderWorkerTemplate.LeaderTemplate, &l.Spec.LeaderWorkerTemplate.WorkerTemplate} {
		tmpl.Labels = quotaLabels()
	}
	if err := c.Create(ctx, l); err != nil {
		t.Fatal(err)
	}
	waitUnit(t, c, ns, "held-0-leaderworkerset", "unit of the held set", anyUnit)
	leader := lwsPod(l, 0, 0)
	jobframework.Gate(leader) // as the pods webhook would
	ungated := lwsPod(l, 0, 1)
	for _, p := range []*corev1.Pod{leader, ungated} {
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	waitPodEvent(t, c, ns, ungated.Name, jobframework.EventLeftAlone, "runs outside the queue")
	admit(t, c, ns, "held-0-leaderworkerset")
	waitUngated(t, c, ns, leader.Name)
}
