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
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/pod"
)

// barePod is a pod with the quota label only, as a user writes it; it runs
// for runFor on its fake node.
func barePod(name, quota, cpu string, runFor time.Duration) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "default",
			Labels:      map[string]string{schedv1alpha1.QuotaNameLabel: quota},
			Annotations: map[string]string{"pod-complete.stage.kwok.x-k8s.io/delay": runFor.String()},
		},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "work", Image: "busybox:stable", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi")},
			}}},
		},
	}
}

// podState reads a pod: gated, its node, its phase.
func podState(ctx context.Context, name string) (gated bool, node string, phase corev1.PodPhase, err error) {
	p := &corev1.Pod{}
	if err := get(ctx, "default", name, p); err != nil {
		return false, "", "", err
	}
	return pod.Gated(p), p.Spec.NodeName, p.Status.Phase, nil
}

// waitPodRan waits until a pod ran on a kwok node and ended Succeeded.
func waitPodRan(t *testing.T, name string) {
	t.Helper()
	eventually(t, "pod "+name+" ran on a kwok node and succeeded", func(ctx context.Context) (bool, error) {
		gated, node, phase, err := podState(ctx, name)
		if err != nil {
			return false, err
		}
		if gated {
			return false, fmt.Errorf("pod %s still gated", name)
		}
		if phase == corev1.PodSucceeded && !strings.HasPrefix(node, "kwok-node-") {
			return false, fmt.Errorf("pod %s succeeded on node %q", name, node)
		}
		return phase == corev1.PodSucceeded, nil
	})
}

// TestBarePodsQueued: a bare pod with the quota label is stored with the
// queue's scheduling gate, admitted, ungated, runs on a kwok node and
// completes, its unit with it; a group of two pods behind it waits gated
// with no node while the first holds the quota, then is admitted whole and
// completes; `kubectl koord-queue why pod/NAME` finds the group's unit from
// a member.
func TestBarePodsQueued(t *testing.T) {
	if !env.QueueRunning {
		t.Skip("koord-queue is not running")
	}
	start := time.Now()
	elasticQuota(t, "pod-q", "1", "4Gi", nil)
	create(t, barePod("pod-solo", "pod-q", "1", 6*time.Second))
	group := func(name string) *corev1.Pod {
		p := barePod(name, "pod-q", "500m", time.Second)
		p.Labels[pod.GroupLabel] = "pod-g"
		p.Annotations[pod.GroupCountAnnotation] = "2"
		return p
	}
	eventually(t, "pod-solo running on a kwok node", func(ctx context.Context) (bool, error) {
		_, node, phase, err := podState(ctx, "pod-solo")
		return err == nil && phase == corev1.PodRunning && strings.HasPrefix(node, "kwok-node-"), err
	})
	waitPhase(t, "default", "pod-solo-pod", "admitted", admitted)
	create(t, group("pod-g-0"))
	create(t, group("pod-g-1"))
	eventually(t, "unit of group pod-g", func(ctx context.Context) (bool, error) {
		_, err := queueUnit(ctx, "default", "pod-g-podgroup")
		return err == nil, client.IgnoreNotFound(err)
	})
	consistently(t, hold, "group pod-g held gated, without a node, while pod-solo runs", func(ctx context.Context) error {
		_, _, solo, err := podState(ctx, "pod-solo")
		if err != nil || solo != corev1.PodRunning {
			return err // pod-solo ended: the hold is over
		}
		for _, n := range []string{"pod-g-0", "pod-g-1"} {
			gated, node, _, err := podState(ctx, n)
			if err != nil {
				return err
			}
			if !gated || node != "" {
				return fmt.Errorf("pod %s gated %v on node %q while its unit waits", n, gated, node)
			}
		}
		return nil
	})
	out, err := kubectlPlugin(t, "why", "pod/pod-g-1", "-n", "default")
	if err != nil || !strings.Contains(out, "pod-g-podgroup") {
		t.Errorf("why pod/pod-g-1: %v\n%s", err, out)
	}
	waitPodRan(t, "pod-solo")
	waitPhase(t, "default", "pod-solo-pod", "Succeed", isPhase(schedv1alpha1.QueueUnitPhaseSucceed))
	waitPodRan(t, "pod-g-0")
	waitPodRan(t, "pod-g-1")
	waitPhase(t, "default", "pod-g-podgroup", "Succeed", isPhase(schedv1alpha1.QueueUnitPhaseSucceed))
	t.Logf("wall time %s", time.Since(start).Round(time.Second))
}
