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
	"github.com/koordinator-sh/koord-queue/pkg/metrics"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

var _ metrics.State = (*Scheduler)(nil)

// MetricsSnapshot gives the gauges their values at scrape time.
func (s *Scheduler) MetricsSnapshot() metrics.Snapshot {
	snap := metrics.Snapshot{UsageByNamespace: map[string]map[string]float64{}, UnitsByJobType: map[[2]string]int{}}
	for _, q := range s.env.fw.ListQuotas() {
		if !q.Exists {
			continue
		}
		snap.Quotas = append(snap.Quotas, metrics.QuotaState{Name: string(q.Name), Min: floats(q.Min), Max: floats(q.Max), Used: floats(q.Used)})
	}
	for name, st := range s.env.queues.Stats() {
		snap.Queues = append(snap.Queues, metrics.QueueState{Name: string(name), Active: st.Active, Backoff: st.Backoff})
	}
	s.cache.each(func(r unitRecord) {
		u := r.obj
		kind := ""
		if u.Spec.ConsumerRef != nil {
			kind = u.Spec.ConsumerRef.Kind
		}
		snap.UnitsByJobType[[2]string{u.Namespace, kind}]++
		if !r.holding {
			return
		}
		byRes := snap.UsageByNamespace[u.Namespace]
		if byRes == nil {
			byRes = map[string]float64{}
			snap.UsageByNamespace[u.Namespace] = byRes
		}
		for r, v := range floats(queueunit.Usage(u)) {
			byRes[r] += v
		}
	})
	return snap
}

// floats renders amounts as Prometheus shows them: cores for CPU, units (bytes
// for memory) for everything else.
func floats(r schedtypes.Resources) map[string]float64 {
	out := make(map[string]float64, len(r))
	for name, v := range r {
		if name == "cpu" {
			out[string(name)] = float64(v) / 1000
		} else {
			out[string(name)] = float64(v)
		}
	}
	return out
}

// arrivals counts the units that come to the scheduler and those that
// finish (metrics.Recorder.Coming); nil records nothing.
type arrivals struct{ m *metrics.Recorder }

var _ unitFollower = arrivals{}

func (a arrivals) unitChanged(ch unitChange) {
	switch {
	case ch.created():
		a.m.Coming(ch.new.Namespace, jobType(ch.new), metrics.StatusCreated)
	case ch.finished():
		a.m.Coming(ch.new.Namespace, jobType(ch.new), metrics.StatusFinished)
	}
}
