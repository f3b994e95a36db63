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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	// The Lease is written before the new leader has caught up and leads;
	// a unit created in between is counted by no replica. Wait until the
	// first replica reports a gauge, which only a leading replica does.
	create(t, utiltesting.MakeElasticQuota("lm").Namespace(ns).Max("cpu", "1").Obj())
	if err := framework.Eventually(ctx(), 30*time.Second, func(context.Context) (bool, error) {
		return metricValue(t, registries[0], `koord_queue_quota_max{quota="lm",resource="cpu"}`) == 1, nil
	}); err != nil {
		t.Fatalf("the first replica never led: %v", err)
	}
	startScheduler(t, replica(registries[1]))
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

// A standby watches the lease: while its holder renews it, the standby
// waits (past several lease durations since it first read it); once the
// renewals stop, it takes the lease no sooner than a lease duration after
// the last one was written, and admits.
func TestStandbyTakesTheLeaseOfADeadLeader(t *testing.T) {
	const ns, leaseName, lease = "dead-leader", "koord-queue-dead-leader", 6 * time.Second
	createNamespace(t, ns)
	now := metav1.NewMicroTime(time.Now())
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: leaseName},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("dead-replica_0"), LeaseDurationSeconds: ptr.To(int32(lease / time.Second)),
			AcquireTime: &now, RenewTime: &now, LeaseTransitions: ptr.To(int32(5)),
		},
	}
	create(t, l)
	startScheduler(t, func(o *app.Options) {
		o.LeaderElect = true
		o.LeaderElectResourceNamespace, o.LeaderElectResourceName = ns, leaseName
		o.LeaseDuration = lease
	})
	// Renew as the holder every half second for 1.5 lease durations.
	var lastWrite time.Time
	for start := time.Now(); time.Since(start) < lease*3/2; {
		if h := leaseHolder(t, ns, leaseName); h != "dead-replica_0" {
			t.Fatalf("the standby took the lease (holder %q) %s into its holder's renewals", h, time.Since(start))
		}
		lastWrite = time.Now()
		renewed := metav1.NewMicroTime(lastWrite)
		l.Spec.RenewTime = &renewed
		if err := env.Client.Update(ctx(), l); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond) // the holder's renew period
	}
	got := &coordinationv1.Lease{}
	if err := framework.Eventually(ctx(), 3*lease, func(c context.Context) (bool, error) {
		if err := env.Client.Get(c, client.ObjectKeyFromObject(l), got); err != nil {
			return false, err
		}
		return ptr.Deref(got.Spec.HolderIdentity, "") != "dead-replica_0", nil
	}); err != nil {
		t.Fatalf("the standby did not take the lease after its holder stopped renewing: %v", err)
	}
	if acquired := got.Spec.AcquireTime.Time; acquired.Before(lastWrite.Add(lease)) {
		t.Errorf("the standby took the lease %s after the last renewal was written, before the lease (%s) ran out",
			acquired.Sub(lastWrite), lease)
	}
	t.Logf("taken over %s after the last renewal was written (lease %s)", got.Spec.AcquireTime.Sub(lastWrite), lease)
	if tr := ptr.Deref(got.Spec.LeaseTransitions, 0); tr != 6 {
		t.Errorf("lease transitions %d after the takeover, want 6", tr)
	}
	create(t, utiltesting.MakeElasticQuota("dead-leader-quota").Namespace(ns).Max("cpu", "4").Min("cpu", "4").Parent("").IsParent(false).Obj())
	create(t, utiltesting.MakeQueueUnit("after-takeover", ns).Quota("dead-leader-quota").Request("cpu", "1").Obj())
	waitPhase(t, ns, "after-takeover", schedv1alpha1.QueueUnitPhaseDequeued)
}
