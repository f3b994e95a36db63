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
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/test/cluster"
)

const (
	// timeout bounds every wait for something the system should do.
	timeout = 90 * time.Second
	// hold is how long a "stays so" check watches.
	hold = 3 * time.Second
	poll = 200 * time.Millisecond
)

func ctxFor(t *testing.T) context.Context {
	t.Helper()
	return t.Context()
}

// kubectl runs the kubectl built by hack/tools.sh against the cluster, as a
// user would, and returns its standard output.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctxFor(t), env.Kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// applyGuide applies one of the guide's files verbatim with kubectl; objects
// without a namespace land in the kubeconfig's namespace, default.
func applyGuide(t *testing.T, file string) {
	t.Helper()
	t.Logf("kubectl apply -f %s\n%s", file, kubectl(t, "apply", "-f", guide(file)))
}

// readGuide decodes a guide file, for the examples that need a name added.
func readGuide(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := cluster.ReadObjects(guide(file))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// eventually polls cond until it returns true, failing the test with the last
// error or the description after timeout.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	eventuallyWithin(t, timeout, what, cond)
}

func eventuallyWithin(t *testing.T, limit time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	ctx := ctxFor(t)
	deadline := time.Now().Add(limit)
	var last error
	for {
		ok, err := cond(ctx)
		if ok && err == nil {
			return
		}
		last = err
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s (last error: %v)", limit, what, last)
		}
		time.Sleep(poll)
	}
}

// consistently checks cond for the whole of d.
func consistently(t *testing.T, d time.Duration, what string, cond func(ctx context.Context) error) {
	t.Helper()
	ctx := ctxFor(t)
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if err := cond(ctx); err != nil {
			t.Fatalf("%s no longer holds: %v", what, err)
		}
		time.Sleep(poll)
	}
}

func get(ctx context.Context, ns, name string, obj client.Object) error {
	return env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, obj)
}

func queueUnit(ctx context.Context, ns, name string) (*schedv1alpha1.QueueUnit, error) {
	qu := &schedv1alpha1.QueueUnit{}
	return qu, get(ctx, ns, name, qu)
}

func phaseOf(ctx context.Context, ns, name string) (schedv1alpha1.QueueUnitPhase, error) {
	qu, err := queueUnit(ctx, ns, name)
	if err != nil {
		return "", err
	}
	return qu.Status.Phase, nil
}

// admitted reports whether a unit has been dequeued (and maybe started).
func admitted(p schedv1alpha1.QueueUnitPhase) bool {
	switch p {
	case schedv1alpha1.QueueUnitPhaseDequeued, schedv1alpha1.QueueUnitPhaseRunning, schedv1alpha1.QueueUnitPhaseSucceed:
		return true
	}
	return false
}

// waitPhase waits until the unit's phase satisfies ok.
func waitPhase(t *testing.T, ns, name, want string, ok func(schedv1alpha1.QueueUnitPhase) bool) {
	t.Helper()
	eventually(t, fmt.Sprintf("QueueUnit %s/%s %s", ns, name, want), func(ctx context.Context) (bool, error) {
		u, err := queueUnit(ctx, ns, name)
		if err != nil {
			return false, err
		}
		if !ok(u.Status.Phase) {
			return false, fmt.Errorf("phase %q, message %q", u.Status.Phase, u.Status.Message)
		}
		return true, nil
	})
}

func isPhase(want schedv1alpha1.QueueUnitPhase) func(schedv1alpha1.QueueUnitPhase) bool {
	return func(p schedv1alpha1.QueueUnitPhase) bool { return p == want }
}

func job(ctx context.Context, ns, name string) (*batchv1.Job, error) {
	j := &batchv1.Job{}
	return j, get(ctx, ns, name, j)
}

func jobSuspended(ctx context.Context, ns, name string) (bool, error) {
	j, err := job(ctx, ns, name)
	if err != nil {
		return false, err
	}
	return ptr.Deref(j.Spec.Suspend, false), nil
}

// waitJobReleased waits until the extension un-suspended a Job.
func waitJobReleased(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, fmt.Sprintf("Job %s/%s un-suspended", ns, name), func(ctx context.Context) (bool, error) {
		s, err := jobSuspended(ctx, ns, name)
		return err == nil && !s, err
	})
}

func jobComplete(ctx context.Context, ns, name string) (bool, error) {
	j, err := job(ctx, ns, name)
	if err != nil {
		return false, err
	}
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			return true, nil
		}
	}
	return false, nil
}

// runningPodOnFakeNode waits for a Running pod of the Job on a kwok node.
func runningPodOnFakeNode(t *testing.T, ns, jobName string) {
	t.Helper()
	eventually(t, fmt.Sprintf("a Running pod of Job %s/%s on a kwok node", ns, jobName), func(ctx context.Context) (bool, error) {
		pods := &corev1.PodList{}
		if err := env.Client.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"job-name": jobName}); err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && strings.HasPrefix(p.Spec.NodeName, "kwok-node-") {
				return true, nil
			}
		}
		return false, fmt.Errorf("%d pods, none Running on a kwok node", len(pods.Items))
	})
}

// absent checks for hold that an object does not appear.
func absent(t *testing.T, what string, obj client.Object, ns, name string) {
	t.Helper()
	consistently(t, hold, what+" absent", func(ctx context.Context) error {
		err := get(ctx, ns, name, obj)
		if err == nil {
			return fmt.Errorf("%s/%s exists", ns, name)
		}
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
}

// elasticQuota creates a leaf ElasticQuota in namespace default.
func elasticQuota(t *testing.T, name, cpu, memory string, labels map[string]string) {
	t.Helper()
	q := &eqv1alpha1.ElasticQuota{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels},
		Spec: eqv1alpha1.ElasticQuotaSpec{Max: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
		}},
	}
	if err := env.Client.Create(ctxFor(t), q); err != nil {
		t.Fatalf("create ElasticQuota %s: %v", name, err)
	}
}

// jobSpec is a suspended batch Job charged to quota, whose pod runs for
// runFor on its fake node (kwok's per-pod delay annotation).
func suspendedJob(name, quota, cpu string, runFor time.Duration) *batchv1.Job {
	labels := map[string]string{}
	if quota != "" {
		labels[schedv1alpha1.QuotaNameLabel] = quota
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels},
		Spec: batchv1.JobSpec{
			Suspend: ptr.To(true),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
					"pod-complete.stage.kwok.x-k8s.io/delay": runFor.String(),
				}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "work", Image: "busybox:stable", Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi")},
					}}},
				},
			},
		},
	}
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(ctxFor(t), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// nestedBool reads a bool field of an unstructured object of kind gvk.
func nestedBool(ctx context.Context, gvk schema.GroupVersionKind, ns, name string, fields ...string) (value, found bool, err error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := get(ctx, ns, name, u); err != nil {
		return false, false, err
	}
	return unstructured.NestedBool(u.Object, fields...)
}

// hasEvent reports whether an event with reason was recorded on the object.
func hasEvent(ctx context.Context, ns, name, reason string) (bool, error) {
	events := &corev1.EventList{}
	if err := env.Client.List(ctx, events, client.InNamespace(ns)); err != nil {
		return false, err
	}
	for _, e := range events.Items {
		if e.InvolvedObject.Name == name && e.Reason == reason {
			return true, nil
		}
	}
	return false, nil
}
