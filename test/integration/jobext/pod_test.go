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
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/pod"
)

// startPodWebhook is startWebhook with the pod extension and a pods webhook
// as the chart writes it: an objectSelector on the quota label, failurePolicy
// Ignore.
func startPodWebhook(t *testing.T) *webhookCluster {
	t.Helper()
	return startPodsWebhook(t, []string{"job", "pod"}, func(ns string) *corev1.Pod { return barePod(ns, "probe", nil) })
}

// startPodsWebhook is startPodWebhook for extensions, probed by creating
// probe(ns) in a dry run until it comes back gated.
func startPodsWebhook(t *testing.T, extensions []string, probe func(ns string) *corev1.Pod, mutate ...func(*appOptions)) *webhookCluster {
	t.Helper()
	w := startWebhook(t, extensions, func(o *appOptions) {
		for _, m := range mutate {
			m(o)
		}
	})
	ctx := context.Background()
	eventually(t, "pods webhook added", func(ctx context.Context) (bool, error) {
		cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := w.c.Get(ctx, client.ObjectKey{Name: w.config}, cfg); err != nil {
			return false, err
		}
		pods := *cfg.Webhooks[0].DeepCopy()
		pods.Name = "pods.koord-queue.x-k8s.io"
		pods.Rules = []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
		}}
		pods.ObjectSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: schedv1alpha1.QuotaNameLabel, Operator: metav1.LabelSelectorOpExists,
		}}}
		cfg.Webhooks = append(cfg.Webhooks[:1], pods)
		return true, w.c.Update(ctx, cfg)
	})
	eventually(t, "pods webhook serving", func(ctx context.Context) (bool, error) {
		p := probe(w.ns)
		if err := w.c.Create(ctx, p, client.DryRunAll); err != nil {
			return false, err
		}
		return pod.Gated(p), nil
	})
	_ = ctx
	return w
}

func barePod(ns, name string, annotations map[string]string, extraLabels ...string) *corev1.Pod {
	labels := quotaLabels()
	for i := 0; i+1 < len(extraLabels); i += 2 {
		labels[extraLabels[i]] = extraLabels[i+1]
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Annotations: annotations},
		Spec:       corev1.PodSpec{Containers: container("1"), RestartPolicy: corev1.RestartPolicyNever},
	}
}

func groupPod(ns, name, group, total string) *corev1.Pod {
	return barePod(ns, name, map[string]string{pod.GroupCountAnnotation: total}, pod.GroupLabel, group)
}

func getPod(t *testing.T, c client.Client, ns, name string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
		t.Fatalf("get pod %s: %v", name, err)
	}
	return p
}

func waitUngated(t *testing.T, c client.Client, ns string, names ...string) {
	t.Helper()
	for _, n := range names {
		eventually(t, "pod "+n+" ungated", func(ctx context.Context) (bool, error) {
			p := &corev1.Pod{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: n}, p); err != nil {
				return false, err
			}
			return !pod.Gated(p), nil
		})
	}
}

func waitPodEvent(t *testing.T, c client.Client, ns, obj, reason, contains string) {
	t.Helper()
	eventually(t, fmt.Sprintf("event %s on %s", reason, obj), func(ctx context.Context) (bool, error) {
		list := &corev1.EventList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Name == obj && e.Reason == reason && strings.Contains(e.Message, contains) {
				return true, nil
			}
		}
		return false, nil
	})
}

// A single pod is held by the gate with no node, gets one unit of one pod
// set charged its requests, is ungated and labelled on admission, finishes
// with its pod, and its unit goes with it.
func TestPodSingle(t *testing.T) {
	w := startPodWebhook(t)
	c, ns := w.c, w.ns
	ctx := context.Background()
	p := barePod(ns, "solo", nil)
	p.Spec.InitContainers = container("3") // the larger init container counts
	p.Spec.InitContainers[0].Name = "init"
	if err := c.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	if got := getPod(t, c, ns, "solo"); !pod.Gated(got) || got.Spec.NodeName != "" {
		t.Fatalf("created pod: gates %v node %q, want the queue's gate and no node", got.Spec.SchedulingGates, got.Spec.NodeName)
	}
	unit := waitUnit(t, c, ns, "solo-pod", "unit of the pod", anyUnit)
	if len(unit.Spec.PodSet) != 1 || unit.Spec.PodSet[0].Count != 1 {
		t.Fatalf("pod sets = %+v, want one set of one", unit.Spec.PodSet)
	}
	if q := unit.Spec.Resource[corev1.ResourceCPU]; q.Cmp(cpu("3")[corev1.ResourceCPU]) != 0 {
		t.Errorf("unit cpu = %s, want 3 (the init container's)", q.String())
	}
	if ref := unit.Spec.ConsumerRef; ref == nil || ref.Kind != "Pod" || ref.Name != "solo" {
		t.Errorf("consumerRef = %+v", ref)
	}
	admit(t, c, ns, "solo-pod")
	waitUngated(t, c, ns, "solo")
	if got := getPod(t, c, ns, "solo"); got.Labels[schedv1alpha1.QueueUnitLabel] != "solo-pod" {
		t.Errorf("pod labels = %v, want %s=solo-pod", got.Labels, schedv1alpha1.QueueUnitLabel)
	}
	// Play the kubelet: the pod succeeds.
	got := getPod(t, c, ns, "solo")
	got.Status.Phase = corev1.PodSucceeded
	if err := c.Status().Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	waitUnit(t, c, ns, "solo-pod", "unit succeeded", phaseIs(schedv1alpha1.QueueUnitPhaseSucceed))
	if err := c.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	waitUnitGone(t, c, ns, "solo-pod")
}

// A group gets no unit until every member is here, then one unit with a
// pod set per shape, admitted whole; eviction deletes its pods and the unit
// goes with them.
func TestPodGroup(t *testing.T) {
	w := startPodWebhook(t)
	c, ns := w.c, w.ns
	ctx := context.Background()
	for _, n := range []string{"g-0", "g-1"} {
		if err := c.Create(ctx, groupPod(ns, n, "g", "3")); err != nil {
			t.Fatal(err)
		}
	}
	waitPodEvent(t, c, ns, "g-1", "WaitingForGroup", "2 of 3 pods")
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "g-podgroup"}, &schedv1alpha1.QueueUnit{}); err == nil {
		t.Fatal("a unit was made before every member of the group was here")
	}
	big := groupPod(ns, "g-2", "g", "3")
	big.Spec.Containers = container("2")
	if err := c.Create(ctx, big); err != nil {
		t.Fatal(err)
	}
	unit := waitUnit(t, c, ns, "g-podgroup", "unit of the group", anyUnit)
	if len(unit.Spec.PodSet) != 2 || unit.Spec.PodSet[0].Count != 2 || unit.Spec.PodSet[1].Count != 1 {
		t.Fatalf("pod sets = %+v, want 2 pods of one shape and 1 of another", unit.Spec.PodSet)
	}
	if q := unit.Spec.Resource[corev1.ResourceCPU]; q.Cmp(cpu("4")[corev1.ResourceCPU]) != 0 {
		t.Errorf("unit cpu = %s, want 4", q.String())
	}
	for _, n := range []string{"g-0", "g-1", "g-2"} {
		if !pod.Gated(getPod(t, c, ns, n)) {
			t.Fatalf("pod %s ungated before admission", n)
		}
	}
	admit(t, c, ns, "g-podgroup")
	waitUngated(t, c, ns, "g-0", "g-1", "g-2")
	evictUnit(t, c, ns, "g-podgroup")
	eventually(t, "evicted pods deleted", func(ctx context.Context) (bool, error) {
		list := &corev1.PodList{}
		if err := c.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{pod.GroupLabel: "g"}); err != nil {
			return false, err
		}
		return len(list.Items) == 0, nil
	})
	waitUnitGone(t, c, ns, "g-podgroup")
}

// Bad groups are refused with an event naming the problem and lose nothing;
// pods of a controller are never touched.
func TestPodBadInput(t *testing.T) {
	w := startPodWebhook(t)
	c, ns := w.c, w.ns
	ctx := context.Background()
	if err := c.Create(ctx, groupPod(ns, "nan-0", "nan", "three")); err != nil {
		t.Fatal(err)
	}
	waitPodEvent(t, c, ns, "nan-0", "InvalidJob", `"three" is not a positive whole number`)
	for _, p := range []*corev1.Pod{groupPod(ns, "mix-0", "mix", "2"), groupPod(ns, "mix-1", "mix", "3")} {
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	waitPodEvent(t, c, ns, "mix-0", "InvalidJob", "disagree on "+pod.GroupCountAnnotation)
	for _, n := range []string{"many-0", "many-1"} {
		if err := c.Create(ctx, groupPod(ns, n, "many", "1")); err != nil {
			t.Fatal(err)
		}
	}
	waitPodEvent(t, c, ns, "many-0", "InvalidJob", "more than its")
	for _, n := range []string{"nan-0", "mix-0", "mix-1", "many-0", "many-1"} {
		if !pod.Gated(getPod(t, c, ns, n)) {
			t.Errorf("pod %s of a bad group lost its gate", n)
		}
	}
	owned := barePod(ns, "owned", nil)
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "0123", Controller: ptrTrue()}}
	if err := c.Create(ctx, owned); err != nil {
		t.Fatal(err)
	}
	if pod.Gated(getPod(t, c, ns, "owned")) {
		t.Error("a pod with a controller was gated")
	}
}

func ptrTrue() *bool { b := true; return &b }
