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
	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/metrics"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

var _ metrics.State = (*Scheduler)(nil)

// MetricsSnapshot gives the gauges their values at scrape time. A follower's
// snapshot is empty: its queues hold the same units as the leader's, and it
// knows no reasons (nothing is reported on a follower).
func (s *Scheduler) MetricsSnapshot() metrics.Snapshot {
	if !s.env.leader() {
		return metrics.Snapshot{}
	}
	snap := metrics.Snapshot{UsageByNamespace: map[string]map[string]float64{}, UnitsByJobType: map[[2]string]int{},
		Waiting: map[metrics.WaitKey]int{}}
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
		if reason := waitReason(r); reason != "" {
			snap.Waiting[metrics.WaitKey{Queue: string(r.queue), Quota: string(r.quota), Reason: reason}]++
		}
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

// waitReason is what a unit waits for, as koord_queue_pending_units_by_reason
// names it: the condition reason of the wait last reported, NotTried before
// a pass refused it, TimeoutBackoff in that phase; "" when it does not wait
// for admission.
func waitReason(r unitRecord) string {
	u := r.obj
	switch {
	case r.inflight || u.DeletionTimestamp != nil:
		return ""
	case u.Status.Phase == schedv1alpha1.QueueUnitPhaseTimeoutBackoff:
		return metrics.ReasonTimeoutBackoff
	case !queueunit.IsPending(u.Status.Phase):
		return ""
	case r.told == nil:
		return metrics.ReasonNotTried
	}
	return r.told.Condition()
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
// finish (metrics.Recorder.Coming). Only the leader counts, as it alone
// counts admissions: a sum over replicas counts each unit once.
type arrivals struct{ *env }

var _ unitFollower = arrivals{}

func (a arrivals) unitChanged(ch unitChange) {
	if !a.leader() {
		return
	}
	switch {
	case ch.created():
		a.opts.Metrics.Coming(ch.new.Namespace, jobType(ch.new), metrics.StatusCreated)
	case ch.finished():
		a.opts.Metrics.Coming(ch.new.Namespace, jobType(ch.new), metrics.StatusFinished)
	}
}
