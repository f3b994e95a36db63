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

package api

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, &env))
}

func guide(name string) string {
	return filepath.Join(framework.RepoRoot(), "test", "testdata", "guide", name)
}

func ensureNamespace(t *testing.T, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := env.Client.Create(context.Background(), ns); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
}

// The guide's API objects are accepted exactly as written.
func TestGuideObjectsAccepted(t *testing.T) {
	ensureNamespace(t, "koord-queue")
	for _, file := range []string{
		"elastic-quota.yaml", "elasticquota-priority.yaml", "elasticquota-block.yaml",
		"elasticquota-intelligent.yaml", "queue-intelligent.yaml", "queue-admission-check.yaml",
		"queueunit-priority.yaml", "jobs.yaml", "workflow.yaml",
	} {
		t.Run(file, func(t *testing.T) {
			objs, err := framework.ReadObjects(guide(file))
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				if o.GetNamespace() == "" {
					o.SetNamespace("default")
				}
				if err := env.Client.Create(context.Background(), o); err != nil {
					t.Fatalf("%s %s refused: %v", o.GetKind(), o.GetName(), err)
				}
			}
		})
	}
	q := &schedv1alpha1.Queue{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: "koord-queue", Name: "my-queue"}, q); err != nil {
		t.Fatal(err)
	}
	if q.Spec.QueuePolicy != schedv1alpha1.QueuePolicyIntelligent || ptr.Deref(q.Spec.Priority, 0) != 1000 {
		t.Errorf("my-queue spec = %+v, want Intelligent / 1000", q.Spec)
	}
}

func TestQueuePolicyDefaultsToPriority(t *testing.T) {
	ensureNamespace(t, "koord-queue")
	q := utiltesting.MakeQueue("defaulted").Obj()
	q.Spec.QueuePolicy = ""
	if err := env.Client.Create(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	if q.Spec.QueuePolicy != schedv1alpha1.QueuePolicyPriority {
		t.Errorf("queuePolicy = %q, want Priority", q.Spec.QueuePolicy)
	}
}

// Invalid objects are refused by the API server with a message naming the field.
func TestValidation(t *testing.T) {
	ensureNamespace(t, "koord-queue")
	ninePodSets := utiltesting.MakeQueueUnit("nine", "default")
	for i := range 9 {
		ninePodSets.PodSet(fmt.Sprintf("set-%d", i), 1, "cpu", "1")
	}
	dupPodSets := utiltesting.MakeQueueUnit("dup", "default").PodSet("worker", 1, "cpu", "1").PodSet("worker", 2, "cpu", "1")
	negCount := utiltesting.MakeQueueUnit("negcount", "default").PodSet("worker", 1, "cpu", "1")
	negCount.Spec.PodSet[0].Count = -1
	minAboveCount := utiltesting.MakeQueueUnit("mincount", "default").PodSet("worker", 1, "cpu", "1")
	minAboveCount.Spec.PodSet[0].MinCount = ptr.To[int32](3)
	negResource := utiltesting.MakeQueueUnit("negres", "default").Obj()
	negResource.Spec.Resource = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")}
	negRequest := utiltesting.MakeQueueUnit("negreq", "default").Obj()
	negRequest.Spec.Request = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("-1Gi")}
	noKind := utiltesting.MakeQueueUnit("nokind", "default").Obj()
	noKind.Spec.ConsumerRef.Kind = ""
	noName := utiltesting.MakeQueueUnit("noname", "default").Obj()
	noName.Spec.ConsumerRef.Name = ""
	noRef := utiltesting.MakeQueueUnit("noref", "default").Obj()
	noRef.Spec.ConsumerRef = nil
	badPolicy := utiltesting.MakeQueue("bad-policy").Policy("FIFO").Obj()

	cases := []struct {
		name string
		obj  client.Object
		want []string
	}{
		{"more than 8 podSets", ninePodSets.Obj(), []string{"spec.podSet", "must have at most 8 items"}},
		{"duplicate podSet names", dupPodSets.Obj(), []string{"spec.podSet[1]", "Duplicate value"}},
		{"negative podSet count", negCount.Obj(), []string{"spec.podSet[0].count", "greater than or equal to 0"}},
		{"minCount above count", minAboveCount.Obj(), []string{"spec", "minCount must not exceed"}},
		{"negative resource", negResource, []string{"spec.resource", "must not be negative"}},
		{"negative request", negRequest, []string{"spec.request", "must not be negative"}},
		{"consumerRef without kind", noKind, []string{"spec.consumerRef", "consumerRef.kind must be set"}},
		{"consumerRef without name", noName, []string{"spec.consumerRef", "consumerRef.name must be set"}},
		{"no consumerRef", noRef, []string{"spec.consumerRef", "Required value"}},
		{"unknown policy", badPolicy, []string{"spec.queuePolicy", `Unsupported value: "FIFO"`, "Priority", "Block", "Intelligent"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := env.Client.Create(context.Background(), tc.obj)
			if err == nil {
				t.Fatal("accepted, want refused")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// The ElasticQuota CRD has no status subresource: status is written with the object.
func TestElasticQuotaStatusWithoutSubresource(t *testing.T) {
	eq := utiltesting.MakeElasticQuota("status-check").Max("cpu", "2").Obj()
	eq.Status.Used = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	if err := env.Client.Create(context.Background(), eq); err != nil {
		t.Fatal(err)
	}
	if got := eq.Status.Used.Cpu().String(); got != "1" {
		t.Errorf("status.used.cpu = %s, want 1 (status is part of the main resource)", got)
	}
}

// kubectl shows QueueUnits with exactly the four printer columns of the guide.
func TestPrinterColumns(t *testing.T) {
	kubectl := os.Getenv("KUBECTL")
	if kubectl == "" {
		t.Fatal("KUBECTL is not set: run the tests with 'make test', which builds kubectl")
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	// The guide's QueueUnit example may already exist from another test.
	run("apply", "--server-side", "-f", guide("queueunit-priority.yaml"))
	out := run("get", "queueunit", "high-priority-job", "-n", "default")
	header := strings.Fields(strings.SplitN(out, "\n", 2)[0])
	if want := []string{"NAME", "PHASE", "PRIORITY", "ADMISSIONS", "JOBTYPE"}; strings.Join(header, " ") != strings.Join(want, " ") {
		t.Errorf("columns = %v, want %v\n%s", header, want, out)
	}
	if !strings.Contains(out, "200") || !strings.Contains(out, "Job") {
		t.Errorf("row lacks priority 200 and JOBTYPE Job:\n%s", out)
	}
	// Short names.
	for _, short := range []string{"qu", "qus"} {
		if out := run("get", short, "-n", "default", "-o", "name"); !strings.Contains(out, "queueunit.scheduling.x-k8s.io/high-priority-job") {
			t.Errorf("kubectl get %s: %s", short, out)
		}
	}
	// Admissions show in their column once set.
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("scheduling.x-k8s.io/v1alpha1")
	u.SetKind("QueueUnit")
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "high-priority-job"}, u); err != nil {
		t.Fatal(err)
	}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"phase": "Dequeued", "admissions": []any{map[string]any{"name": "main", "replicas": 1}}}})
	if err := env.Client.Status().Patch(context.Background(), u, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
	if out := run("get", "qu", "high-priority-job", "-n", "default"); !strings.Contains(out, "Dequeued") || !strings.Contains(out, `"replicas":1`) {
		t.Errorf("PHASE/ADMISSIONS not shown:\n%s", out)
	}
}
