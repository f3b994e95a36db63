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
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/app"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

func leaseHolder(t *testing.T, ns, name string) string {
	t.Helper()
	l := &coordinationv1.Lease{}
	if err := env.Client.Get(ctx(), client.ObjectKey{Namespace: ns, Name: name}, l); err != nil {
		return ""
	}
	return ptr.Deref(l.Spec.HolderIdentity, "")
}

// A replica that stops hands its lease over at once: the next one admits
// well before a lease duration (a minute here) has passed.
func TestStoppedLeaderReleasesItsLease(t *testing.T) {
	const leaseNS, leaseName = "failover-lease", "koord-queue-failover"
	createNamespace(t, leaseNS)
	elect := func(o *app.Options) {
		o.LeaderElect = true
		o.LeaderElectResourceNamespace, o.LeaderElectResourceName = leaseNS, leaseName
		o.LeaseDuration = time.Minute
	}
	stopFirst := startScheduler(t, elect)
	var first string
	if err := framework.Eventually(ctx(), 30*time.Second, func(context.Context) (bool, error) {
		first = leaseHolder(t, leaseNS, leaseName)
		return first != "", nil
	}); err != nil {
		t.Fatalf("the first replica did not take the lease: %v", err)
	}
	if !strings.Contains(first, "_") {
		t.Errorf("holder %q is not a replica identity (host_uuid)", first)
	}
	stopFirst()
	if h := leaseHolder(t, leaseNS, leaseName); h != "" {
		t.Fatalf("lease still held by %q after the leader stopped: the next replica would wait a lease duration", h)
	}

	startScheduler(t, elect)
	createNamespace(t, "failover")
	create(t, utiltesting.MakeElasticQuota("failover-quota").Namespace("failover").Max("cpu", "4").Min("cpu", "4").Parent("").IsParent(false).Obj())
	create(t, utiltesting.MakeQueueUnit("after-failover", "failover").Quota("failover-quota").Request("cpu", "1").Obj())
	// Far less than the minute an unreleased lease would hold the new replica back.
	waitPhase(t, "failover", "after-failover", schedv1alpha1.QueueUnitPhaseDequeued)
	if second := leaseHolder(t, leaseNS, leaseName); second == "" || second == first {
		t.Errorf("lease holder %q after the failover, want a new replica (the first was %q)", second, first)
	}
}

// Only the leader exports the gauges and counts arrivals: a follower, whose
// queues hold the same units, exports none, so sums over replicas count
// each unit once.
func TestOnlyTheLeaderCountsUnits(t *testing.T) {
	const ns, leaseName = "leader-metrics", "koord-queue-leader-metrics"
	createNamespace(t, ns)
	registries := []*prometheus.Registry{prometheus.NewRegistry(), prometheus.NewRegistry()}
	replica := func(reg *prometheus.Registry) func(o *app.Options) {
		return func(o *app.Options) {
			o.LeaderElect = true
			o.LeaderElectResourceNamespace, o.LeaderElectResourceName = ns, leaseName
			o.MetricsRegistry = reg
		}
	}
	startScheduler(t, replica(registries[0]))
	if err := framework.Eventually(ctx(), 30*time.Second, func(context.Context) (bool, error) {
		return leaseHolder(t, ns, leaseName) != "", nil
	}); err != nil {
		t.Fatalf("the first replica did not take the lease: %v", err)
	}
	startScheduler(t, replica(registries[1]))
	create(t, utiltesting.MakeElasticQuota("lm").Namespace(ns).Max("cpu", "1").Obj())
	create(t, utiltesting.MakeQueueUnit("big", ns).Quota("lm").Request("cpu", "2").ConsumerRef("batch/v1", "Job", "big").Obj())
	waitMessage(t, ns, "big")

	samples := []string{
		`koord_queue_pending_units_by_reason{queue="lm",quota="lm",reason="NeverFits"}`,
		`koord_queue_pending_units{queue="lm"}`,
		`queueunits_coming_rate_by_job_type{namespace="leader-metrics",status="created",type="Job"}`,
	}
	for _, s := range samples {
		if got := metricValue(t, registries[0], s); got != 1 {
			t.Errorf("leader: %s = %v, want 1", s, got)
		}
		if got := metricValue(t, registries[1], s); got != 0 {
			t.Errorf("follower: %s = %v, want 0", s, got)
		}
	}
}
