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

package queue

import (
	"fmt"
	"testing"
	"time"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// benchSetup builds a depth-4 quota tree (root <- 2 orgs <- departments <- teams
// <- one leaf quota per queue), one queue per leaf, and units spread over them.
// Every leaf is full, so each unit is tried and fails: the worst case of a pass.
func benchSetup(b *testing.B, units, queues int) (*Manager, *quota.Tree) {
	b.Helper()
	tr := quota.New(1)
	m := NewManager(nil)
	for i := range queues {
		org, dept, team, leaf := schedtypes.QuotaName(fmt.Sprintf("org-%d", i%2)), schedtypes.QuotaName(fmt.Sprintf("dept-%d", i%8)), schedtypes.QuotaName(fmt.Sprintf("team-%d", i%32)), schedtypes.QuotaName(fmt.Sprintf("leaf-%d", i))
		for _, s := range []quota.Spec{
			{Name: org, Max: schedtypes.Resources{"cpu": 1 << 40}},
			{Name: dept, Parent: org, Max: schedtypes.Resources{"cpu": 1 << 40}},
			{Name: team, Parent: dept, Max: schedtypes.Resources{"cpu": 1 << 40, "memory": 1 << 50}},
			{Name: leaf, Parent: team, Max: schedtypes.Resources{"cpu": 1000, "memory": 1 << 30}},
		} {
			if err := tr.Upsert(s); err != nil {
				b.Fatal(err)
			}
		}
		tr.Charge(leaf, schedtypes.Resources{"cpu": 1000})
		m.UpsertQueue(Settings{Name: schedtypes.QueueName(leaf), Policy: schedv1alpha1.QueuePolicyPriority, Priority: int32(i % 3)})
	}
	t0 := time.Unix(0, 0)
	for i := range units {
		leaf := schedtypes.QuotaName(fmt.Sprintf("leaf-%d", i%queues))
		m.Upsert(&schedtypes.Unit{
			Key: schedtypes.UnitKey(fmt.Sprintf("ns/u-%d", i)), Namespace: "ns", Name: fmt.Sprintf("u-%d", i),
			Priority: int32(i % 7), Created: t0.Add(time.Duration(i) * time.Millisecond),
			Quota: leaf, Cohort: tr.Cohort(leaf), Request: schedtypes.Resources{"cpu": 500, "memory": 1 << 20},
		}, schedtypes.QueueName(leaf), true)
	}
	return m, tr
}

// BenchmarkPass measures one pass in which every pending unit is tried, and
// reports the cost per unit examined so growth with scale shows.
func BenchmarkPass(b *testing.B) {
	for _, size := range []struct{ units, queues int }{{1000, 10}, {10000, 100}, {100000, 1000}} {
		b.Run(fmt.Sprintf("units=%d/queues=%d", size.units, size.queues), func(b *testing.B) {
			m, tr := benchSetup(b, size.units, size.queues)
			try := func(u *schedtypes.Unit, _ Settings) *schedtypes.Failure {
				if s := tr.Check(u.Quota, u.Request); s != nil {
					return &schedtypes.Failure{Reason: s.Reason(), Message: "", NeverFits: s.NeverFits}
				}
				tr.Charge(u.Quota, u.Request)
				return nil
			}
			b.ReportAllocs()
			b.ResetTimer()
			examined := 0
			for b.Loop() {
				m.Invalidate()
				res := m.Pass(try)
				examined += res.Examined
				if len(res.Admitted) != 0 {
					b.Fatalf("admitted %d", len(res.Admitted))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(examined), "ns/unit")
		})
	}
}

// BenchmarkPassNothingChanged is the common case: units tried before and
// nothing freed, so a pass only walks the queues.
func BenchmarkPassNothingChanged(b *testing.B) {
	m, tr := benchSetup(b, 10000, 100)
	try := func(u *schedtypes.Unit, _ Settings) *schedtypes.Failure {
		s := tr.Check(u.Quota, u.Request)
		return &schedtypes.Failure{Reason: s.Reason()}
	}
	m.Pass(try)
	b.ReportAllocs()
	for b.Loop() {
		m.Pass(try)
	}
}

// BenchmarkPassCovering is BenchmarkPass when the caller marks refusals as
// covering (the scheduler does for quota shortages): a queue whose head is
// refused and whose units all ask as much ends its turn there.
func BenchmarkPassCovering(b *testing.B) {
	m, tr := benchSetup(b, 100000, 1000)
	try := func(u *schedtypes.Unit, _ Settings) *schedtypes.Failure {
		s := tr.Check(u.Quota, u.Request)
		return &schedtypes.Failure{Reason: s.Reason(), Covering: true}
	}
	m.Pass(try)
	b.ReportAllocs()
	for b.Loop() {
		m.Invalidate()
		m.Pass(try)
	}
}

// BenchmarkPassWaitingForRoom is BenchmarkPass when every refusal names the
// room its unit lacks (the scheduler's quota shortages do): after each walk
// the queue settles, keeping the least lack per cohort and resource.
func BenchmarkPassWaitingForRoom(b *testing.B) {
	m, tr := benchSetup(b, 10000, 100)
	try := func(u *schedtypes.Unit, _ Settings) *schedtypes.Failure {
		s := tr.Check(u.Quota, u.Request)
		lack := &schedtypes.Lack{Resource: "cpu", Amount: u.Request["cpu"], Root: u.Priority%2 == 0}
		return &schedtypes.Failure{Reason: s.Reason(), Recheck: &schedtypes.Recheck{Quota: u.Quota, Priority: u.Priority, Lack: lack}}
	}
	b.ReportAllocs()
	for b.Loop() {
		m.Invalidate()
		m.Pass(try)
	}
}

// BenchmarkPassAfterARelease is the pass after room comes back in a
// cohort whose units all wait for room, each lacking its own amount: every
// queue of the cohort is walked, and about one unit in 64 is worth a try
// (and is refused again). The rest are walked past: what a walk costs
// beyond the tries.
func BenchmarkPassAfterARelease(b *testing.B) {
	m, tr := benchSetup(b, 10000, 100)
	lacks := map[schedtypes.UnitKey]*schedtypes.Lack{}
	try := func(u *schedtypes.Unit, _ Settings) *schedtypes.Failure {
		s := tr.Check(u.Quota, u.Request)
		l := lacks[u.Key]
		if l == nil {
			l = &schedtypes.Lack{Resource: "cpu", Amount: 500 * (1 + int64(len(lacks)%64))}
			lacks[u.Key] = l
		}
		return &schedtypes.Failure{Reason: s.Reason(), Recheck: &schedtypes.Recheck{Quota: u.Quota, Priority: u.Priority, Lack: l}}
	}
	m.Pass(try)
	cohort := tr.Cohort("leaf-0")
	examined := 0
	b.ReportAllocs()
	for b.Loop() {
		m.FreedRoom(cohort, schedtypes.Resources{"cpu": 500})
		examined += m.Pass(try).Examined
	}
	b.ReportMetric(float64(examined)/float64(b.N), "examined/op")
}
