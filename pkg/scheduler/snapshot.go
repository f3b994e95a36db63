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
	"maps"

	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queue"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/view"
)

// snapshot answers the read-only APIs with copies (view.Reader).
type snapshot struct {
	e        *env
	objects  client.Reader
	unsynced func() []string
}

var _ view.Reader = snapshot{}

// View is the scheduler as the visibility and debug APIs may see it.
func (s *Scheduler) View() view.Reader {
	return snapshot{e: s.env, objects: s.informer, unsynced: s.unsynced}
}

func (v snapshot) QueueNames() []schedtypes.QueueName { return v.e.queues.QueueNames() }

func (v snapshot) QueueSettings(name schedtypes.QueueName) (queue.Settings, bool) {
	return v.e.queues.QueueSettings(name)
}

func (v snapshot) Pending(name schedtypes.QueueName) ([]view.PendingUnit, bool) {
	live, ok := v.e.queues.Pending(name)
	if !ok {
		return nil, false
	}
	out := make([]view.PendingUnit, 0, len(live))
	for _, p := range live {
		out = append(out, view.PendingUnit{
			Namespace: p.Namespace, Name: p.Name, Quota: p.Quota, Priority: p.Priority, Position: p.Position,
			Request: maps.Clone(p.Request), Created: p.Created, Enqueued: p.Enqueued,
		})
	}
	return out, true
}

func (v snapshot) PendingCounts() map[schedtypes.QueueName]int { return v.e.queues.Counts() }

func (v snapshot) Orphans() map[schedtypes.QueueName][]schedtypes.UnitKey {
	return v.e.queues.Orphans()
}

func (v snapshot) Quotas() []schedtypes.Info { return v.e.fw.ListQuotas() }

func (v snapshot) Map(u *schedv1alpha1.QueueUnit) (schedtypes.QueueName, schedtypes.QuotaName) {
	return v.e.fw.Map(u)
}

func (v snapshot) Cohort(quotaName schedtypes.QuotaName) schedtypes.CohortName {
	return v.e.fw.Cohort(quotaName)
}

func (v snapshot) Objects() client.Reader { return v.objects }

func (v snapshot) Leading() bool { return v.e.leader() }

func (v snapshot) Unsynced() []string { return v.unsynced() }
