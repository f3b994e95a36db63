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
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/textlogger"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/app"
	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

const (
	waitTimeout = 20 * time.Second
	// quietPeriod is how long a test waits to see that nothing happens.
	quietPeriod = 2 * time.Second
	quota       = "team-a"
)

var env *framework.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(testLogVerbosity()))))
	os.Exit(framework.RunSuite(m, &env))
}

// testLogVerbosity is the manager's log verbosity: $JOBEXT_TEST_V, else 0
// (errors and warnings only, to keep test output readable).
func testLogVerbosity() int {
	v, _ := strconv.Atoi(os.Getenv("JOBEXT_TEST_V"))
	return v
}

// k8s is the test's client, with the job kinds in its scheme.
func k8s(t *testing.T) client.Client {
	t.Helper()
	c, err := client.New(env.Config, client.Options{Scheme: app.NewScheme()})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return c
}

// startManager creates a namespace and runs koord-queue-controllers on it
// until the test ends.
func startManager(t *testing.T, extensions []string, mutate func(*app.Options)) (client.Client, string) {
	t.Helper()
	return startManagerWith(t, env.Config, extensions, mutate)
}

// startManagerWith is startManager with the manager talking to the API
// server through cfg.
func startManagerWith(t *testing.T, cfg *rest.Config, extensions []string, mutate func(*app.Options)) (client.Client, string) {
	t.Helper()
	c := k8s(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "jobext-"}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(runManager(t, cfg, ns.Name, extensions, mutate))
	return c, ns.Name
}

// runManager runs koord-queue-controllers on namespace ns, talking to the
// API server through cfg; the returned stop ends it and waits until it has
// stopped (a second call does nothing).
func runManager(t *testing.T, cfg *rest.Config, ns string, extensions []string, mutate func(*app.Options)) (stop func()) {
	t.Helper()
	o := app.NewOptions()
	o.EnabledExtensions = extensions
	o.LeaderElect = false
	o.MetricsBindAddress = "0"
	o.HealthProbeBindAddress = "0"
	o.SkipNameValidation = true
	o.WatchNamespaces = []string{ns}
	if mutate != nil {
		mutate(o)
	}
	mgr, err := app.NewManager(cfg, o, clock.RealClock{})
	if err != nil {
		t.Fatalf("new manager: %v", err)
	}
	mctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
		})
	}
}

// writeConfig writes a controllers configuration file for the test.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func eventually(t *testing.T, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	if err := framework.Eventually(context.Background(), waitTimeout, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// waitUnit waits for a unit to exist and to satisfy cond.
func waitUnit(t *testing.T, c client.Client, ns, name, what string, cond func(*schedv1alpha1.QueueUnit) bool) *schedv1alpha1.QueueUnit {
	t.Helper()
	unit := &schedv1alpha1.QueueUnit{}
	eventually(t, what, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, unit); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return cond(unit), nil
	})
	return unit
}

func anyUnit(*schedv1alpha1.QueueUnit) bool { return true }

// waitUnitGone waits for a unit to be deleted.
func waitUnitGone(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	eventually(t, "queue unit "+name+" deleted", func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &schedv1alpha1.QueueUnit{})
		return err != nil && client.IgnoreNotFound(err) == nil, nil
	})
}

// updateUnitStatus plays the scheduler: it changes a unit's status, retrying
// on conflicts.
func updateUnitStatus(t *testing.T, c client.Client, ns, name string, change func(*schedv1alpha1.QueueUnit)) {
	t.Helper()
	eventually(t, "status write of "+name, func(ctx context.Context) (bool, error) {
		unit := &schedv1alpha1.QueueUnit{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, unit); err != nil {
			return false, err
		}
		change(unit)
		return true, c.Status().Update(ctx, unit)
	})
}

// admit plays the scheduler's admission: Dequeued with admissions, each pod
// set admitted at its size and its pods' requests.
func admit(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	updateUnitStatus(t, c, ns, name, func(u *schedv1alpha1.QueueUnit) {
		now := metav1.Now()
		u.Status.Phase = schedv1alpha1.QueueUnitPhaseDequeued
		u.Status.LastAllocateTime = &now
		u.Status.Admissions = nil
		for _, ps := range u.Spec.PodSet {
			u.Status.Admissions = append(u.Status.Admissions, schedv1alpha1.Admission{Name: ps.Name, Replicas: ps.Count,
				Resources: resources.PodRequests(&ps.Template.Spec)})
		}
		for _, ct := range []string{schedv1alpha1.ConditionQuotaReserved, schedv1alpha1.ConditionAdmitted} {
			meta.SetStatusCondition(&u.Status.Conditions, metav1.Condition{Type: ct, Status: metav1.ConditionTrue, Reason: "Admitted", Message: "test"})
		}
		meta.SetStatusCondition(&u.Status.Conditions, metav1.Condition{Type: schedv1alpha1.ConditionEvicted, Status: metav1.ConditionFalse, Reason: "Admitted", Message: "test"})
	})
}

// evictUnit plays the scheduler's preemption.
func evictUnit(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	updateUnitStatus(t, c, ns, name, func(u *schedv1alpha1.QueueUnit) {
		meta.SetStatusCondition(&u.Status.Conditions, metav1.Condition{
			Type: schedv1alpha1.ConditionEvicted, Status: metav1.ConditionTrue,
			Reason: schedv1alpha1.ReasonPreempted, Message: "test preempts",
		})
	})
}

func phaseIs(p schedv1alpha1.QueueUnitPhase) func(*schedv1alpha1.QueueUnit) bool {
	return func(u *schedv1alpha1.QueueUnit) bool { return u.Status.Phase == p }
}

// requeued is a unit handed back after eviction.
func requeued(u *schedv1alpha1.QueueUnit) bool {
	return u.Status.Phase == schedv1alpha1.QueueUnitPhaseEnqueued && len(u.Status.Admissions) == 0 &&
		u.Status.PodState == nil && meta.IsStatusConditionFalse(u.Status.Conditions, schedv1alpha1.ConditionQuotaReserved) &&
		meta.IsStatusConditionFalse(u.Status.Conditions, schedv1alpha1.ConditionAdmitted)
}

// enqueue plays the scheduler's first sight of a unit.
func enqueue(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	updateUnitStatus(t, c, ns, name, func(u *schedv1alpha1.QueueUnit) {
		u.Status.Phase = schedv1alpha1.QueueUnitPhaseEnqueued
	})
}
