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

package cluster_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/test/cluster"
)

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// ToolsDir finds the tools: KUBEBUILDER_ASSETS (set by the Makefile), else
// what hack/tools.sh says. Missing tools are Start's error, never a skip.
func toolsDir(t *testing.T) string {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d
	}
	out, err := exec.Command(filepath.Join(repoRoot(), "hack", "tools.sh"), "dir").Output()
	if err != nil {
		t.Fatalf("hack/tools.sh dir: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestSuspendedJobRunsToCompletion brings up the bare cluster (no
// koord-queue), un-suspends a suspended Job and waits until its pod ran on a
// fake node and the Job completed, then stops the cluster and checks that no
// process is left.
func TestSuspendedJobRunsToCompletion(t *testing.T) {
	ports, err := cluster.FreePorts()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Options{
		StateDir:      t.TempDir(),
		ToolsDir:      toolsDir(t),
		Ports:         ports,
		Nodes:         cluster.Nodes{Count: 2, CPU: "8", Memory: "16Gi"},
		PodRunTime:    2 * time.Second,
		KoordQueue:    cluster.KoordQueue{Mode: cluster.KoordQueueOff, RepoRoot: repoRoot()},
		DieWithParent: true,
		Log:           testWriter{t},
	})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = c.Stop()
		}
	}()

	checkChartPolicies(ctx, t, c)

	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "default"},
		Spec: batchv1.JobSpec{
			Suspend: ptr.To(true),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
				}}},
			}},
		},
	}
	if err := c.Client.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	pods := &corev1.PodList{}
	if err := c.Client.List(ctx, pods, client.InNamespace("default")); err != nil || len(pods.Items) != 0 {
		t.Fatalf("a suspended job has pods: %d (%v)", len(pods.Items), err)
	}
	patch := client.MergeFrom(job.DeepCopy())
	job.Spec.Suspend = ptr.To(false)
	if err := c.Client.Patch(ctx, job, patch); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return false, err
		}
		for _, cond := range job.Status.Conditions {
			if cond.Type == batchv1.JobComplete && cond.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("job did not complete: %v; status %+v", err, job.Status)
	}
	if err := c.Client.List(ctx, pods, client.InNamespace("default"), client.MatchingLabels{"job-name": "plain"}); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || !strings.HasPrefix(pods.Items[0].Spec.NodeName, "kwok-node-") || pods.Items[0].Status.Phase != corev1.PodSucceeded {
		t.Fatalf("want one Succeeded pod on a kwok node, got %d pods: %+v", len(pods.Items), pods.Items)
	}

	state := c.Options().StateDir
	if err := c.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	stopped = true
	if _, err := os.Stat(filepath.Join(state, "state.json")); !os.IsNotExist(err) {
		t.Errorf("state.json left behind after Stop: %v", err)
	}
	if err := cluster.Down(state, testWriter{t}); err != nil {
		t.Errorf("down after stop: %v", err)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// checkChartPolicies checks that the cluster runs under the chart's
// policies: the guide's check controller (under its ServiceAccount) answers
// a unit's check and nothing more, another ServiceAccount is refused, and so
// is an ElasticQuota whose min is above its max.
func checkChartPolicies(ctx context.Context, t *testing.T, c *cluster.Cluster) {
	t.Helper()
	unit := &schedv1alpha1.QueueUnit{
		ObjectMeta: metav1.ObjectMeta{Name: "policy-probe", Namespace: "default"},
		Spec: schedv1alpha1.QueueUnitSpec{
			Queue:       "probe",
			ConsumerRef: &corev1.ObjectReference{APIVersion: "example.com/v1", Kind: "Example", Name: "policy-probe", Namespace: "default"},
		},
	}
	if err := c.Client.Create(ctx, unit); err != nil {
		t.Fatal(err)
	}
	patch := func(cl client.Client, body string) error {
		return cl.Status().Patch(ctx, unit.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(body)))
	}
	if err := patch(c.Client, `{"status":{"phase":"Reserved","admissionChecks":[{"name":"prov-req-check","state":"Pending"}]}}`); err != nil {
		t.Fatal(err)
	}
	as := func(user string) client.Client {
		cfg := rest.CopyConfig(c.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
		cl, err := client.New(cfg, client.Options{Scheme: c.Client.Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	const ready = `{"status":{"admissionChecks":[{"name":"prov-req-check","state":"Ready"}]}}`
	provisioner, other := as("system:serviceaccount:provisioning:provisioner"), as("system:serviceaccount:provisioning:other")
	// RBAC reaches the authorizer through an informer.
	var err error
	_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		err = patch(provisioner, ready)
		return err == nil, nil
	})
	if err != nil {
		t.Errorf("the guide's check controller provisioning/provisioner cannot answer a check: %v", err)
	}
	if err := patch(provisioner, `{"status":{"phase":"Dequeued"}}`); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "status.phase") {
		t.Errorf("the guide's check controller set status.phase: %v (want the policy's refusal)", err)
	}
	if err := patch(other, ready); !apierrors.IsForbidden(err) {
		t.Errorf("an unlisted ServiceAccount wrote a check: %v", err)
	}
	quota := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"min": map[string]any{"cpu": "3"}, "max": map[string]any{"cpu": "2"}}}}
	quota.SetGroupVersionKind(schema.GroupVersionKind{Group: "scheduling.sigs.k8s.io", Version: "v1alpha1", Kind: "ElasticQuota"})
	quota.SetNamespace("default")
	quota.SetName("min-above-max")
	if err := c.Client.Create(ctx, quota); err == nil || !strings.Contains(err.Error(), "spec.min is above spec.max") {
		t.Errorf("an ElasticQuota with min above max: %v, want the chart's policy refusal", err)
	}
}
