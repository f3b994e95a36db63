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

package kubectlplugin

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/kubectlplugin"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/app"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, &env))
}

const ns = "plugin"

func startScheduler(t *testing.T) {
	t.Helper()
	o := app.NewOptions()
	o.LeaderElect = false
	o.MetricsBindAddress = "0"
	o.MetricsRegistry = prometheus.NewRegistry()
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	framework.RunScheduler(t, env.Config, o)
}

// plugin runs `kubectl koord-queue ARGS` in-process and returns its output.
func plugin(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := kubectlplugin.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs(append([]string{"--kubeconfig", kubeconfig}, args...))
	err := cmd.Execute()
	return out.String() + errOut.String(), err
}

func waitUnit(t *testing.T, name string, ok func(*schedv1alpha1.QueueUnit) bool) {
	t.Helper()
	u := &schedv1alpha1.QueueUnit{}
	err := framework.Eventually(context.Background(), 30*time.Second, func(c context.Context) (bool, error) {
		if err := env.Client.Get(c, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
			return false, err
		}
		return ok(u), nil
	})
	if err != nil {
		t.Fatalf("unit %s: phase %q message %q: %v", name, u.Status.Phase, u.Status.Message, err)
	}
}

func TestPluginReadsTheObjects(t *testing.T) {
	startScheduler(t)
	ctx := context.Background()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{
		utiltesting.MakeElasticQuota("org").Namespace(ns).Max("cpu", "10").IsParent(true).Obj(),
		utiltesting.MakeElasticQuota("team-a").Namespace(ns).Parent("org").Min("cpu", "2").Max("cpu", "4").Obj(),
	} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Client.Create(ctx, utiltesting.MakeQueueUnit("first", ns).Quota("team-a").Request("cpu", "4").Obj()); err != nil {
		t.Fatal(err)
	}
	waitUnit(t, "first", func(u *schedv1alpha1.QueueUnit) bool { return u.Status.Phase == schedv1alpha1.QueueUnitPhaseDequeued })
	for _, u := range []*schedv1alpha1.QueueUnit{
		utiltesting.MakeQueueUnit("second", ns).Quota("team-a").Request("cpu", "4").Priority(5).Obj(),
		utiltesting.MakeQueueUnit("third-tfjob", ns).Quota("team-a").Request("cpu", "1").Priority(1).
			ConsumerRef("kubeflow.org/v1", "TFJob", "third").Obj(),
	} {
		if err := env.Client.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"second", "third-tfjob"} {
		waitUnit(t, name, func(u *schedv1alpha1.QueueUnit) bool {
			return u.Status.Phase == schedv1alpha1.QueueUnitPhaseEnqueued && u.Status.Message != ""
		})
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}

	t.Run("list", func(t *testing.T) {
		out, err := plugin(t, kubeconfig, "-n", ns, "list", "--source", "objects")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 4 {
			t.Fatalf("want a header and 3 units:\n%s", out)
		}
		for i, want := range []string{"second team-a team-a Enqueued 1 5", "third-tfjob team-a team-a Enqueued 2 1", "first team-a team-a Dequeued - 0"} {
			if got := strings.Join(strings.Fields(lines[i+1]), " "); !strings.HasPrefix(got, want) {
				t.Errorf("row %d: %q, want it to start with %q", i+1, got, want)
			}
		}
		if !strings.Contains(lines[1], "team-a") || len(strings.Fields(lines[1])) < 9 {
			t.Errorf("the head does not say why it waits: %q", lines[1])
		}
	})

	t.Run("why a TFJob: quota path and the unit ahead", func(t *testing.T) {
		out, err := plugin(t, kubeconfig, "-n", ns, "why", "tfjob/third")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for _, want := range []string{
			"QueueUnit:   plugin/third-tfjob (tfjob/third)",
			"Position:    2\n",
			"Quota:       team-a",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("missing %q in:\n%s", want, out)
			}
		}
		// team-a: 4 used of max 4, 1 short; org: 4 used of 10.
		rows := map[string]string{}
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) >= 5 && f[1] == "cpu" {
				rows[f[0]] = strings.Join(f[1:], " ")
			}
		}
		if rows["team-a"] != "cpu 4 2 4 1" || rows["org"] != "cpu 4 - 10" {
			t.Errorf("quota path rows %v in:\n%s", rows, out)
		}
		ahead := out[strings.Index(out, "Ahead in queue team-a:"):]
		if !strings.Contains(ahead, "plugin/second") {
			t.Errorf("second is not listed ahead:\n%s", out)
		}
	})

	t.Run("queues", func(t *testing.T) {
		out, err := plugin(t, kubeconfig, "-n", ns, "queues", "--source", "objects")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var row string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "team-a ") {
				row = strings.Join(strings.Fields(l), " ")
			}
		}
		if row != "team-a Priority 1000 2 1 cpu 4/2/4" {
			t.Errorf("team-a row %q in:\n%s", row, out)
		}
	})

	t.Run("stop refuses when it cannot see the gates, --force sets it", func(t *testing.T) {
		out, err := plugin(t, kubeconfig, "-n", ns, "stop", "second")
		if err == nil || !strings.Contains(err.Error(), "cannot tell whether koord-queue runs with feature gate QueueUnitActive") {
			t.Fatalf("got %v\n%s", err, out)
		}
		if out, err := plugin(t, kubeconfig, "-n", ns, "stop", "second", "--force"); err != nil || !strings.Contains(out, "queueunit plugin/second stopped") {
			t.Fatalf("%v\n%s", err, out)
		}
		u := &schedv1alpha1.QueueUnit{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "second"}, u); err != nil || u.Spec.Active == nil || *u.Spec.Active {
			t.Errorf("spec.active %v (%v)", u.Spec.Active, err)
		}
		if out, err := plugin(t, kubeconfig, "-n", ns, "resume", "job/second", "--force"); err != nil || !strings.Contains(out, "resumed") {
			t.Fatalf("%v\n%s", err, out)
		}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "second"}, u); err != nil || u.Spec.Active == nil || !*u.Spec.Active {
			t.Errorf("spec.active %v (%v)", u.Spec.Active, err)
		}
	})

	t.Run("unknown job", func(t *testing.T) {
		_, err := plugin(t, kubeconfig, "-n", ns, "why", "rayjob/third")
		if err == nil || !strings.Contains(err.Error(), "no QueueUnit in namespace plugin belongs to RayJob third") {
			t.Errorf("got %v", err)
		}
	})
}
