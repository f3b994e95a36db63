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

package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	jobframework "github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/test/cluster"
)

var lwsGVK = schema.GroupVersionKind{Group: "leaderworkerset.x-k8s.io", Version: "v1", Kind: "LeaderWorkerSet"}

// groupPods lists the pods of group g of LeaderWorkerSet name by the labels
// the lws controller and its pod webhook give them.
func groupPods(ctx context.Context, name string, g int) ([]corev1.Pod, error) {
	pods := &corev1.PodList{}
	err := env.Client.List(ctx, pods, client.InNamespace("default"), client.MatchingLabels{
		"leaderworkerset.sigs.k8s.io/name": name, "leaderworkerset.sigs.k8s.io/group-index": fmt.Sprint(g),
	})
	return pods.Items, err
}

// groupHeld: the group's pods are all there (size of them), gated, with no node.
func groupHeld(ctx context.Context, name string, g, size int) error {
	pods, err := groupPods(ctx, name, g)
	if err != nil {
		return err
	}
	if len(pods) != size {
		return fmt.Errorf("group %d has %d pods, want %d", g, len(pods), size)
	}
	for _, p := range pods {
		if !jobframework.Gated(&p) || p.Spec.NodeName != "" || p.DeletionTimestamp != nil {
			return fmt.Errorf("pod %s: gated %v node %q deleting %v", p.Name, jobframework.Gated(&p), p.Spec.NodeName, p.DeletionTimestamp != nil)
		}
	}
	return nil
}

// waitGroupRunning waits until the group's size pods run on kwok nodes,
// labelled with their unit, and returns their UIDs.
func waitGroupRunning(t *testing.T, name string, g, size int) map[string]bool {
	t.Helper()
	uids := map[string]bool{}
	eventually(t, fmt.Sprintf("group %d of %s running on kwok nodes", g, name), func(ctx context.Context) (bool, error) {
		pods, err := groupPods(ctx, name, g)
		if err != nil || len(pods) != size {
			return false, errors.Join(err, fmt.Errorf("%d pods", len(pods)))
		}
		clear(uids)
		for _, p := range pods {
			unit := fmt.Sprintf("%s-%d-leaderworkerset", name, g)
			if p.Status.Phase != corev1.PodRunning || !strings.HasPrefix(p.Spec.NodeName, "kwok-node-") || p.Labels[schedv1alpha1.QueueUnitLabel] != unit {
				return false, fmt.Errorf("pod %s %s on %q, unit label %q", p.Name, p.Status.Phase, p.Spec.NodeName, p.Labels[schedv1alpha1.QueueUnitLabel])
			}
			uids[string(p.UID)] = true
		}
		return true, nil
	})
	return uids
}

func scaleSet(t *testing.T, name string, replicas int64) {
	t.Helper()
	eventually(t, fmt.Sprintf("scale %s to %d groups", name, replicas), func(ctx context.Context) (bool, error) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(lwsGVK)
		if err := get(ctx, "default", name, u); err != nil {
			return false, err
		}
		if err := unstructured.SetNestedField(u.Object, replicas, "spec", "replicas"); err != nil {
			return false, err
		}
		return true, env.Client.Update(ctx, u)
	})
}

// TestLeaderWorkerSet runs a LeaderWorkerSet with the stock lws controller:
// each group (a leader and a worker) is a unit. Held: its pods exist, gated,
// with no node; admitted, they run on kwok nodes; evicted by a preemptor,
// they are deleted and come back gated until the unit is admitted again;
// scaled up by a group, the new group waits while the first runs on, then is
// admitted; scaled down, the removed group's unit finishes. A
// LeaderWorkerSet never completes, so the case deletes it.
func TestLeaderWorkerSet(t *testing.T) {
	if !env.QueueRunning {
		t.Skip("koord-queue is not running")
	}
	needOperator(t, cluster.LWSController)
	start := time.Now()
	const name, size = "lws-a", 2
	// Too small for a group of 1 cpu at first; lower priorities preempted.
	quota := name
	create(t, &eqv1alpha1.ElasticQuota{
		ObjectMeta: metav1.ObjectMeta{Name: quota, Namespace: "default", Annotations: map[string]string{
			schedv1alpha1.PreemptionPolicyAnnotation: string(schedv1alpha1.PreemptionLowerPriority),
		}},
		Spec: eqv1alpha1.ElasticQuotaSpec{Max: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("32Gi"),
		}},
	})
	set := newObject(lwsGVK, name, quota, map[string]any{
		"replicas": int64(1),
		"leaderWorkerTemplate": map[string]any{
			"size":           int64(size),
			"workerTemplate": podTemplate("worker", "500m", 0),
		},
	})
	set.SetAnnotations(map[string]string{schedv1alpha1.PriorityAnnotation: "0"})
	create(t, set)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), set) })
	unit0, unit1 := name+"-0-leaderworkerset", name+"-1-leaderworkerset"

	waitPhase(t, "default", unit0, "enqueued (the quota is too small)", isPhase(schedv1alpha1.QueueUnitPhaseEnqueued))
	eventually(t, "the lws controller made group 0's pods, held", func(ctx context.Context) (bool, error) {
		err := groupHeld(ctx, name, 0, size)
		return err == nil, err
	})
	consistently(t, hold, "group 0 held: gated, no node", func(ctx context.Context) error { return groupHeld(ctx, name, 0, size) })

	raiseQuota(t, quota, "1")
	waitPhase(t, "default", unit0, "admitted", admitted)
	first := waitGroupRunning(t, name, 0, size)

	// A Job of higher priority takes the quota: the group's pods are deleted,
	// its StatefulSets make them again, held, until the Job is done.
	preemptor := suspendedJob(name+"-preemptor", quota, "1", 3*time.Second)
	preemptor.Annotations = map[string]string{schedv1alpha1.PriorityAnnotation: "100"}
	create(t, preemptor)
	eventually(t, name+" group 0 evicted, its pods made again and held", func(ctx context.Context) (bool, error) {
		pods, err := groupPods(ctx, name, 0)
		if err != nil {
			return false, err
		}
		for _, p := range pods {
			if first[string(p.UID)] {
				return false, fmt.Errorf("pod %s of the evicted group still there", p.Name)
			}
		}
		if err := groupHeld(ctx, name, 0, size); err != nil {
			return false, err
		}
		return hasEvent(ctx, "default", unit0, "Preempted")
	})
	eventually(t, "the preemptor completes", func(ctx context.Context) (bool, error) { return jobComplete(ctx, "default", preemptor.Name) })
	waitPhase(t, "default", unit0, "admitted again", admitted)
	waitGroupRunning(t, name, 0, size)

	// A second group waits while the first runs on; more quota admits it.
	scaleSet(t, name, 2)
	waitPhase(t, "default", unit1, "enqueued (the quota is full)", isPhase(schedv1alpha1.QueueUnitPhaseEnqueued))
	eventually(t, "group 1's pods made, held", func(ctx context.Context) (bool, error) {
		err := groupHeld(ctx, name, 1, size)
		return err == nil, err
	})
	running := waitGroupRunning(t, name, 0, size)
	out, err := kubectlPlugin(t, "why", "lws/"+name, "-n", "default")
	if err != nil || !strings.Contains(out, unit1) {
		t.Errorf("why lws/%s does not name the waiting group's unit %s: %v\n%s", name, unit1, err, out)
	}
	raiseQuota(t, quota, "2")
	waitPhase(t, "default", unit1, "admitted", admitted)
	waitGroupRunning(t, name, 1, size)
	if again := waitGroupRunning(t, name, 0, size); fmt.Sprint(again) != fmt.Sprint(running) {
		t.Errorf("group 0's pods changed while group 1 was added")
	}

	// Back to one group: group 1's unit finishes and gives its quota back.
	scaleSet(t, name, 1)
	waitPhase(t, "default", unit1, "finished", isPhase(schedv1alpha1.QueueUnitPhaseSucceed))
	eventually(t, "group 1's pods gone", func(ctx context.Context) (bool, error) {
		pods, err := groupPods(ctx, name, 1)
		return err == nil && len(pods) == 0, err
	})
	waitPhase(t, "default", unit0, "still admitted", admitted)
	t.Logf("wall time %s", time.Since(start).Round(time.Second))
}
