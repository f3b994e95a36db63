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

package scheduler

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/app"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, &env))
}

// startScheduler runs koord-queue in-process against the test API server and
// returns a function that stops it and waits until it has.
func startScheduler(t *testing.T, mutate ...func(*app.Options)) func() {
	t.Helper()
	o := app.NewOptions()
	o.LeaderElect = false
	o.MetricsBindAddress = "0"
	o.MetricsRegistry = prometheus.NewRegistry()
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	// Changes apply to the completed options, the parsed config among them.
	for _, m := range mutate {
		m(o)
	}
	return framework.RunScheduler(t, env.Config, o)
}

func ctx() context.Context { return context.Background() }

func createNamespace(t *testing.T, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := env.Client.Create(ctx(), ns); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(ctx(), o); err != nil {
			t.Fatalf("create %s: %v", o.GetName(), err)
		}
	}
}

func getUnit(t *testing.T, ns, name string) *schedv1alpha1.QueueUnit {
	t.Helper()
	u := &schedv1alpha1.QueueUnit{}
	if err := env.Client.Get(ctx(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	return u
}

// waitPhase waits until a unit reaches phase and returns it.
func waitPhase(t *testing.T, ns, name string, phase schedv1alpha1.QueueUnitPhase) *schedv1alpha1.QueueUnit {
	t.Helper()
	var u *schedv1alpha1.QueueUnit
	err := framework.Eventually(ctx(), 30*time.Second, func(c context.Context) (bool, error) {
		u = &schedv1alpha1.QueueUnit{}
		if err := env.Client.Get(c, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
			return false, err
		}
		return u.Status.Phase == phase, nil
	})
	if err != nil {
		dump(t, ns)
		t.Fatalf("unit %s/%s did not reach %s (phase %q, message %q): %v", ns, name, phase, u.Status.Phase, u.Status.Message, err)
	}
	return u
}

// dump logs every unit and event of a namespace, to see why a test failed.
func dump(t *testing.T, ns string) {
	t.Helper()
	list := &schedv1alpha1.QueueUnitList{}
	_ = env.Client.List(context.Background(), list, client.InNamespace(ns))
	for _, u := range list.Items {
		t.Logf("unit %s phase=%s message=%q admissions=%v conditions=%v", u.Name, u.Status.Phase, u.Status.Message, u.Status.Admissions, u.Status.Conditions)
	}
	evs := &corev1.EventList{}
	_ = env.Client.List(context.Background(), evs, client.InNamespace(ns))
	for _, e := range evs.Items {
		t.Logf("event %s %s %s: %s", e.InvolvedObject.Name, e.Type, e.Reason, e.Message)
	}
}

// setPhase plays the job extension: it writes a unit's phase.
func setPhase(t *testing.T, ns, name string, phase schedv1alpha1.QueueUnitPhase) {
	t.Helper()
	err := framework.Eventually(ctx(), 10*time.Second, func(c context.Context) (bool, error) {
		u := &schedv1alpha1.QueueUnit{}
		if err := env.Client.Get(c, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
			return false, err
		}
		u.Status.Phase = phase
		return true, env.Client.Status().Update(c, u)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func events(t *testing.T, ns, name, reason string) []corev1.Event {
	t.Helper()
	list := &corev1.EventList{}
	if err := env.Client.List(ctx(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []corev1.Event
	for _, e := range list.Items {
		if e.InvolvedObject.Name == name && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// runFakeExtension plays the job extension for the units of ns (see
// fakeExtension) until the test ends.
func runFakeExtension(t *testing.T, ns string) {
	t.Helper()
	runCtx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { fakeExtension(runCtx, ns) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

// update reads obj (ns/name), applies mutate and writes it back, again on a
// conflict, until it lands.
func update[T client.Object](t *testing.T, obj T, ns, name string, mutate func(T)) {
	t.Helper()
	if err := framework.Eventually(ctx(), 10*time.Second, func(c context.Context) (bool, error) {
		if err := env.Client.Get(c, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
			return false, err
		}
		mutate(obj)
		return true, env.Client.Update(c, obj)
	}); err != nil {
		t.Fatalf("update %s/%s: %v", ns, name, err)
	}
}

// hasEvent reports whether an event of reason on ns/name says want.
func hasEvent(t *testing.T, ns, name, reason, want string) bool {
	t.Helper()
	for _, e := range events(t, ns, name, reason) {
		if strings.Contains(e.Message, want) {
			return true
		}
	}
	return false
}
