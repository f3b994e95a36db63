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

package debugapi

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queue"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/view"
)

type schedulerSource struct {
	s view.Reader
}

var _ Source = (*schedulerSource)(nil)

// FromScheduler adapts a scheduler's read-only view (Scheduler.View) to Source.
func FromScheduler(s view.Reader) Source { return &schedulerSource{s: s} }

func (a *schedulerSource) Quotas() []Quota {
	infos := a.s.Quotas()
	out := make([]Quota, 0, len(infos))
	for _, q := range infos {
		out = append(out, Quota{
			Name: string(q.Name), Parent: string(q.Parent), Exists: q.Exists,
			Min: q.Min.ToList(), Max: q.Max.ToList(), Used: q.Used.ToList(), Children: strs(q.Children),
		})
	}
	return out
}

func (a *schedulerSource) Queues() []Queue {
	counts := a.s.PendingCounts()
	var out []Queue
	for _, name := range a.s.QueueNames() {
		set, ok := a.s.QueueSettings(name)
		if !ok {
			continue
		}
		q := queueOf(set)
		q.PendingCount = counts[name]
		out = append(out, q)
	}
	return out
}

func (a *schedulerSource) Orphans() map[string][]string {
	orphans := a.s.Orphans()
	out := make(map[string][]string, len(orphans))
	for name, keys := range orphans {
		out[string(name)] = strs(keys)
	}
	return out
}

// strs converts typed names to the plain strings of the JSON answers.
func strs[S ~string](names []S) []string {
	if names == nil {
		return nil
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = string(n)
	}
	return out
}

func (a *schedulerSource) Queue(ctx context.Context, name string) (Queue, bool) {
	set, ok := a.s.QueueSettings(schedtypes.QueueName(name))
	if !ok {
		return Queue{}, false
	}
	pending, ok := a.s.Pending(schedtypes.QueueName(name))
	if !ok {
		return Queue{}, false
	}
	q := queueOf(set)
	q.PendingCount = len(pending)
	q.Pending = make([]Unit, 0, len(pending))
	for _, p := range pending {
		u := Unit{
			// Cohort is asked of the framework: the unit's own field is written by passes.
			Position: p.Position, Namespace: p.Namespace, Name: p.Name, Priority: p.Priority,
			Quota: string(p.Quota), Cohort: string(a.s.Cohort(p.Quota)), Request: p.Request.ToList(), Created: p.Created, Enqueued: p.Enqueued,
		}
		obj := &schedv1alpha1.QueueUnit{}
		if err := a.s.Objects().Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: p.Name}, obj, client.UnsafeDisableDeepCopy); err == nil {
			u.Message = obj.Status.Message
		}
		q.Pending = append(q.Pending, u)
	}
	return q, true
}

func queueOf(s queue.Settings) Queue {
	return Queue{
		Name: string(s.Name), Policy: string(s.Policy), Priority: s.Priority, PriorityThreshold: s.Threshold,
		MaxDepth: s.MaxDepth, WaitForPodsRunning: s.WaitForPodsRunning,
	}
}
