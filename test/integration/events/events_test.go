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

package events

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/koordinator-sh/koord-queue/pkg/eventrecorder"
	"github.com/koordinator-sh/koord-queue/pkg/metrics"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(klog.Background())
	os.Exit(framework.RunSuite(m, &env))
}

func namespace(t *testing.T, name string) {
	t.Helper()
	if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

func unit(ns string, i int) *corev1.ConfigMap {
	name := fmt.Sprintf("unit-%04d", i)
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID(ns + "-" + name)}}
}

// run starts r until the test ends.
func run(t *testing.T, r *eventrecorder.Recorder) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = r.Start(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// countByReason sums the counts of the events in ns by reason, and by
// object and message for reason.
func countByReason(ctx context.Context, ns string) (map[string]int, map[string]int, error) {
	list, err := env.Clientset.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	byReason, byKey := map[string]int{}, map[string]int{}
	for _, e := range list.Items {
		n := int(max(e.Count, 1))
		if e.Series != nil {
			n = int(max(e.Series.Count, 1))
		}
		byReason[e.Reason] += n
		byKey[e.InvolvedObject.Name+"/"+e.Reason+"/"+e.Message] += n
	}
	return byReason, byKey, nil
}

// TestBurstLosesNoEvent records 4,000 events at once through a client
// limited to 100 writes/s, as a burst of admissions would: 2,000 distinct
// Scheduled events (200 units, 10 rounds, a message per round) and 2,000
// identical Reclaimed ones (10 per unit). client-go's broadcaster, with its
// queue of 1,000, drops most of such a burst. Every one must be in the API,
// counted by Event.count, and the drop counter must stay at 0.
func TestBurstLosesNoEvent(t *testing.T) {
	const ns, units, rounds = "burst", 200, 10
	namespace(t, ns)
	reg := prometheus.NewRegistry()
	em := metrics.NewEvents()
	if err := em.Register(reg); err != nil {
		t.Fatal(err)
	}
	r, err := eventrecorder.NewForConfig(env.Config, 100, 100, scheme.Scheme, eventrecorder.Options{Component: "koord-queue", Instance: "burst-test", Metrics: em})
	if err != nil {
		t.Fatal(err)
	}
	run(t, r)
	for round := range rounds {
		for i := range units {
			u := unit(ns, i)
			r.Eventf(u, corev1.EventTypeNormal, "Scheduled", "Admitted by queue q; round %d", round)
			r.Event(u, corev1.EventTypeNormal, "Reclaimed", "Resources released; the unit is back in queue q")
		}
	}
	ctx := context.Background()
	var byReason, byKey map[string]int
	err = framework.Eventually(ctx, 3*time.Minute, func(ctx context.Context) (bool, error) {
		if r.Pending() > 0 {
			return false, nil
		}
		var err error
		byReason, byKey, err = countByReason(ctx, ns)
		return byReason["Scheduled"] >= units*rounds && byReason["Reclaimed"] >= units*rounds, err
	})
	if err != nil {
		t.Fatalf("events in the API by reason %v, want %d Scheduled and %d Reclaimed: %v", byReason, units*rounds, units*rounds, err)
	}
	if byReason["Scheduled"] != units*rounds || byReason["Reclaimed"] != units*rounds {
		t.Errorf("events by reason %v, want exactly %d of each", byReason, units*rounds)
	}
	for i := range units {
		for round := range rounds {
			k := fmt.Sprintf("%s/Scheduled/Admitted by queue q; round %d", unit(ns, i).Name, round)
			if byKey[k] != 1 {
				t.Errorf("%s: %d events, want 1", k, byKey[k])
			}
		}
	}
	for _, cause := range []string{eventrecorder.CauseQueueFull, eventrecorder.CauseRejected, eventrecorder.CauseShutdown} {
		if v := dropped(t, reg, cause); v != 0 {
			t.Errorf("%s{cause=%s} = %v, want 0", metrics.MetricEventsDropped, cause, v)
		}
	}
	written := writtenCount(t, reg)
	list, err := env.Clientset.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if written != float64(len(list.Items)) {
		t.Errorf("%s = %v, but the API holds %d Events", metrics.MetricEventsWritten, written, len(list.Items))
	}
	t.Logf("4,000 events recorded, %d Event objects written", len(list.Items))
}

// TestDropsAreCounted fills a small queue faster than a slow client can
// empty it, and records an event the API server refuses (its namespace does
// not exist): what is written plus what is counted as dropped is everything
// recorded, and some were dropped.
func TestDropsAreCounted(t *testing.T) {
	const ns, n = "drops", 300
	namespace(t, ns)
	reg := prometheus.NewRegistry()
	em := metrics.NewEvents()
	if err := em.Register(reg); err != nil {
		t.Fatal(err)
	}
	r, err := eventrecorder.NewForConfig(env.Config, 20, 1, scheme.Scheme, eventrecorder.Options{Component: "koord-queue", Instance: "drop-test", MaxPending: 20, Metrics: em})
	if err != nil {
		t.Fatal(err)
	}
	run(t, r)
	r.Event(unit("no-such-namespace", 0), corev1.EventTypeNormal, "Scheduled", "Admitted by queue q")
	for i := range n {
		r.Event(unit(ns, i), corev1.EventTypeNormal, "Scheduled", "Admitted by queue q")
	}
	var inAPI int
	var full, rejected float64
	err = framework.Eventually(context.Background(), time.Minute, func(ctx context.Context) (bool, error) {
		byReason, _, err := countByReason(ctx, ns)
		inAPI = byReason["Scheduled"]
		full, rejected = dropped(t, reg, eventrecorder.CauseQueueFull), dropped(t, reg, eventrecorder.CauseRejected)
		return inAPI+int(full) == n && rejected == 1, err
	})
	if err != nil {
		t.Fatalf("%d events in the API, %v dropped as queue_full, %v rejected; want %d in all and 1 rejected: %v", inAPI, full, rejected, n, err)
	}
	if full == 0 {
		t.Errorf("no event dropped: the test did not fill the queue (%d in the API)", inAPI)
	}
}

func dropped(t *testing.T, reg *prometheus.Registry, cause string) float64 {
	t.Helper()
	return value(t, reg, metrics.MetricEventsDropped, "cause", cause)
}

func writtenCount(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	return value(t, reg, metrics.MetricEventsWritten, "", "")
}

// value is the sample of metric name whose label has value (or the only
// sample when label is empty); a metric not gathered fails the test.
func value(t *testing.T, reg *prometheus.Registry, name, label, want string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			ok := label == ""
			for _, l := range m.GetLabel() {
				ok = ok || l.GetName() == label && l.GetValue() == want
			}
			if ok {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("metric %s{%s=%q} not gathered", name, label, want)
	return 0
}
