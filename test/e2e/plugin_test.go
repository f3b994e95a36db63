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
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/kubectlplugin"
	"github.com/koordinator-sh/koord-queue/test/cluster"
)

// kubectlPlugin runs `kubectl koord-queue ARGS` as a user would: kubectl finds
// the plugin kubectl-koord_queue on PATH (the cluster's bin folder).
func kubectlPlugin(t *testing.T, args ...string) (string, error) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(env.BinDir, cluster.PluginBinary)); err != nil {
		t.Fatalf("the plugin was not built: %v", err)
	}
	cmd := exec.CommandContext(ctxFor(t), env.Kubectl, append([]string{"koord-queue"}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig, "PATH="+env.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestKubectlPluginExplainsTheWait: two jobs wait behind a full quota; `why`
// names the quota, its shortfall and the unit ahead, from the visibility API
// served through the aggregation layer. A tenant sees only its namespace's
// units, at their positions in the whole queue.
func TestKubectlPluginExplainsTheWait(t *testing.T) {
	const quotaName, nsA, nsB = "plugin-q", "e2e-plugin", "e2e-plugin-b"
	for _, ns := range []string{nsA, nsB} {
		create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	create(t, &eqv1alpha1.ElasticQuota{
		ObjectMeta: metav1.ObjectMeta{Name: quotaName, Namespace: nsA,
			Annotations: map[string]string{eqv1alpha1.NamespacesAnnotation: `["` + nsA + `","` + nsB + `"]`}},
		Spec: eqv1alpha1.ElasticQuotaSpec{Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
	})
	eventually(t, "Queue koord-queue/"+quotaName, func(ctx context.Context) (bool, error) {
		return get(ctx, schedv1alpha1.QueueNamespace, quotaName, &schedv1alpha1.Queue{}) == nil, nil
	})
	// Priorities fix the order (creation times count in whole seconds).
	jobIn := func(ns, name, priority string) {
		j := suspendedJob(name, quotaName, "1", 10*time.Minute)
		j.Namespace = ns
		j.Annotations = map[string]string{schedv1alpha1.PriorityAnnotation: priority}
		create(t, j)
	}
	jobIn(nsA, "holder", "9")
	waitPhase(t, nsA, "holder", "dequeued", admitted)
	jobIn(nsA, "waiter", "3")
	jobIn(nsB, "other", "2")
	jobIn(nsA, "waiter2", "1")
	eventually(t, "waiter2 to say why it waits", func(ctx context.Context) (bool, error) {
		u, err := queueUnit(ctx, nsA, "waiter2")
		return err == nil && u.Status.Phase == schedv1alpha1.QueueUnitPhaseEnqueued && u.Status.Message != "", err
	})

	t.Run("why names the quota and the units ahead", func(t *testing.T) {
		var x kubectlplugin.Explanation
		eventually(t, "why job/waiter2 at position 3", func(context.Context) (bool, error) {
			out, err := kubectlPlugin(t, "why", "job/waiter2", "-n", nsA, "-o", "json")
			if err != nil {
				return false, err
			}
			x = kubectlplugin.Explanation{}
			return json.Unmarshal([]byte(out), &x) == nil && x.Position == 3, nil
		})
		if x.Source != kubectlplugin.SourceVisibility || x.Quota != quotaName || x.QueueLength != 3 || x.Reason == "" || x.Priority != 1 {
			t.Errorf("explanation %+v", x)
		}
		if len(x.QuotaPath) != 1 || x.QuotaPath[0].Name != quotaName || len(x.QuotaPath[0].Resources) == 0 {
			t.Fatalf("quota path %+v", x.QuotaPath)
		}
		if cpu := x.QuotaPath[0].Resources[0]; cpu.Resource != "cpu" || cpu.Used != "1" || cpu.Max != "1" || cpu.Short != "1" {
			t.Errorf("cpu level %+v, want used 1 of max 1, 1 short", cpu)
		}
		var ahead []string
		for _, e := range x.Ahead {
			ahead = append(ahead, e.Namespace+"/"+e.Name)
		}
		if strings.Join(ahead, " ") != nsB+"/other "+nsA+"/waiter" {
			t.Errorf("ahead %v, want the nearest first: other, waiter", ahead)
		}
		text, err := kubectlPlugin(t, "why", "waiter2", "-n", nsA)
		if err != nil || !strings.Contains(text, "Position:    3\n") || !strings.Contains(text, "Ahead in queue "+quotaName) {
			t.Errorf("%v\n%s", err, text)
		}
	})

	t.Run("list and queues", func(t *testing.T) {
		out, err := kubectlPlugin(t, "list", "-n", nsA, "--source", "visibility")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			f := strings.Fields(l)
			got = append(got, f[0]+":"+f[4])
		}
		if strings.Join(got, " ") != "waiter:1 waiter2:3 holder:-" {
			t.Errorf("names:positions %v in:\n%s", got, out)
		}
		out, err = kubectlPlugin(t, "queues", "-n", nsA)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var row string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, quotaName+" ") {
				row = strings.Join(strings.Fields(l), " ")
			}
		}
		// The holder uses 1 cpu and 1Gi; the quota limits cpu only.
		if row != quotaName+" Priority 1000 3 1 cpu 1/-/1, memory 1Gi/-/-" {
			t.Errorf("queue row %q in:\n%s", row, out)
		}
	})

	t.Run("stop is refused while the gate is off", func(t *testing.T) {
		out, err := kubectlPlugin(t, "stop", "job/waiter2", "-n", nsA)
		if err == nil || !strings.Contains(out, "refused: koord-queue runs without feature gate QueueUnitActive") {
			t.Errorf("got %v\n%s", err, out)
		}
	})

	t.Run("kubectl get prints the visibility Table", func(t *testing.T) {
		out := kubectl(t, "get", "queues.visibility.koord-queue.x-k8s.io", quotaName, "--subresource", "queueunits", "--no-headers")
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Fields(l)
			got = append(got, f[0]+"/"+f[1]+":"+f[2])
		}
		if want := nsA + "/waiter:1 " + nsB + "/other:2 " + nsA + "/waiter2:3"; strings.Join(got, " ") != want {
			t.Errorf("rows %v, want %s\n%s", got, want, out)
		}
	})

	t.Run("a tenant sees its namespace at whole-queue positions", func(t *testing.T) {
		const tenant = "e2e-plugin-tenant"
		create(t, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "queueunit-reader", Namespace: nsB},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{schedv1alpha1.GroupVersion.Group},
				Resources: []string{"queueunits"}, Verbs: []string{"get", "list", "watch"}}},
		})
		create(t, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: tenant, Namespace: nsB},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "queueunit-reader"},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: tenant}},
		})
		path := "/apis/visibility.koord-queue.x-k8s.io/v1alpha1/queues/" + quotaName + "/queueunits"
		var got visibilityv1alpha1.QueueUnitsSummary
		// The visibility server caches access decisions for a few seconds.
		eventually(t, "the tenant's view", func(context.Context) (bool, error) {
			got = visibilityv1alpha1.QueueUnitsSummary{}
			out := kubectl(t, "get", "--raw", path, "--as", tenant)
			return json.Unmarshal([]byte(out), &got) == nil && len(got.Items) == 1 && got.Total == 1, nil
		})
		if it := got.Items[0]; it.Namespace != nsB || it.Name != "other" || it.PositionInQueue != 2 {
			t.Errorf("tenant sees %+v", it)
		}
		out, err := kubectlPlugin(t, "why", "job/other", "-n", nsB, "--as", tenant)
		if err != nil || !strings.Contains(out, "Position:    2\n") || !strings.Contains(out, "(1 more in namespaces you may not list)") {
			t.Errorf("%v\n%s", err, out)
		}
	})
}
