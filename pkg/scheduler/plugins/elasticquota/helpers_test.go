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

package elasticquota

import (
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
)

// testHandle is the scheduler as the plugin sees it: a fake client, a fake
// recorder and a fake clock, and a record of the retries asked for.
type testHandle struct {
	client    client.Client
	recorder  *record.FakeRecorder
	clock     *clocktesting.FakeClock
	informers cache.Cache

	mu          sync.Mutex
	freed       []schedtypes.CohortName
	invalidated int
	// room and holdings are what FreedRoom and HoldingsChanged were told.
	room     []roomFreed
	holdings []holdingsChanged
}

type roomFreed struct {
	cohort schedtypes.CohortName
	amount schedtypes.Resources
}

type holdingsChanged struct {
	quota    schedtypes.QuotaName
	priority int32
	released bool
}

var _ framework.Handle = (*testHandle)(nil)

func newTestHandle(objs ...client.Object) *testHandle {
	return &testHandle{
		client:   fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).Build(),
		recorder: record.NewFakeRecorder(100),
		clock:    clocktesting.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)),
	}
}

func (h *testHandle) Client() client.Client          { return h.client }
func (h *testHandle) Cache() cache.Cache             { return h.informers }
func (h *testHandle) Recorder() record.EventRecorder { return h.recorder }
func (h *testHandle) Clock() clock.Clock             { return h.clock }

func (h *testHandle) Freed(cohort schedtypes.CohortName) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.freed = append(h.freed, cohort)
}

// FreedRoom counts as Freed too: the cohort is worth a look.
func (h *testHandle) FreedRoom(cohort schedtypes.CohortName, amount schedtypes.Resources) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.freed = append(h.freed, cohort)
	h.room = append(h.room, roomFreed{cohort, amount.Clone()})
}

func (h *testHandle) HoldingsChanged(quota schedtypes.QuotaName, priority int32, released bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.holdings = append(h.holdings, holdingsChanged{quota, priority, released})
}

// takeNotes returns what FreedRoom and HoldingsChanged were told since the
// last call.
func (h *testHandle) takeNotes() ([]roomFreed, []holdingsChanged) {
	h.mu.Lock()
	defer h.mu.Unlock()
	room, holdings := h.room, h.holdings
	h.room, h.holdings = nil, nil
	return room, holdings
}

func (h *testHandle) Invalidate() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.invalidated++
}

// takeFreed returns the cohorts freed since the last call.
func (h *testHandle) takeFreed() []schedtypes.CohortName {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.freed
	h.freed = nil
	return out
}

func (h *testHandle) invalidations() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.invalidated
}

// events drains the events recorded so far.
func (h *testHandle) events() []string {
	var out []string
	for {
		select {
		case e := <-h.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// newTestPlugin builds the plugin without informers and feeds it quotas as
// its ElasticQuota handler would.
func newTestPlugin(t *testing.T, args *configv1.ElasticQuotaArgs, quotas ...*eqv1alpha1.ElasticQuota) (*Plugin, *testHandle) {
	t.Helper()
	h := newTestHandle()
	if args == nil {
		args = &configv1.ElasticQuotaArgs{}
	}
	p := newPlugin(args, h)
	t.Cleanup(p.follow.queue.ShutDown)
	for _, q := range quotas {
		p.follow.onQuota(q)
	}
	return p, h
}

// cpu is n whole CPUs in the amounts the quota counts (milli-CPUs).
func cpu(n int64) schedtypes.Resources { return schedtypes.Resources{corev1.ResourceCPU: n * 1000} }

// unit is a unit of namespace default asking for n CPUs of a quota.
func unit(name string, quotaName schedtypes.QuotaName, priority int32, n int64) *framework.UnitInfo {
	return unitIn("default", name, quotaName, priority, n)
}

func unitIn(ns, name string, quotaName schedtypes.QuotaName, priority int32, n int64) *framework.UnitInfo {
	return &framework.UnitInfo{
		Key:  schedtypes.NewUnitKey(ns, name),
		Unit: &schedv1alpha1.QueueUnit{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
		// The queue is named like the quota (Map).
		Queue: schedtypes.QueueName(quotaName), Quota: quotaName, Request: cpu(n), Priority: priority,
	}
}

// holding is what unit u holds, admitted at.
func holding(u *framework.UnitInfo, at time.Time) *schedtypes.Holding {
	return &schedtypes.Holding{Key: u.Key, Quota: u.Quota, Used: u.Request, Priority: u.Priority, AllocatedAt: at}
}

// usedCPU is the CPU quota name uses, in milli-CPUs, as ListQuotas says.
func usedCPU(t *testing.T, p *Plugin, name schedtypes.QuotaName) int64 {
	t.Helper()
	for _, q := range p.ListQuotas() {
		if q.Name == name {
			return q.Used[corev1.ResourceCPU]
		}
	}
	t.Fatalf("quota %s not listed", name)
	return 0
}

// quotaObj is an ElasticQuota object.
type quotaObj = eqv1alpha1.ElasticQuota
