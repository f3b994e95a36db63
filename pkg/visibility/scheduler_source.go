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

package visibility

import (
	"context"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/view"
)

// schedulerSource reads a scheduler's pending queues, its quota tree and its
// informer cache. It never calls the API server.
type schedulerSource struct {
	s view.Reader
}

var (
	_ Source  = (*schedulerSource)(nil)
	_ Replica = (*schedulerSource)(nil)
)

// FromScheduler adapts a scheduler's read-only view (Scheduler.View) to Source.
func FromScheduler(s view.Reader) Source { return &schedulerSource{s: s} }

// Leading implements Replica.
func (a *schedulerSource) Leading() bool { return a.s.Leading() }

// Unsynced implements Replica.
func (a *schedulerSource) Unsynced() []string { return a.s.Unsynced() }

// Units implements Source.
func (a *schedulerSource) Units(ctx context.Context, scope Scope, phase string) ([]visibilityv1alpha1.QueueUnitSummary, bool, error) {
	var match func(queueName schedtypes.QueueName, quotaName schedtypes.QuotaName) bool
	switch scope.Resource {
	case visibilityv1alpha1.ResourceQueues:
		name := schedtypes.QueueName(scope.Name)
		if !hasQueue(a.s, name) {
			return nil, false, nil
		}
		match = func(q schedtypes.QueueName, _ schedtypes.QuotaName) bool { return q == name }
	case visibilityv1alpha1.ResourceElasticQuotas:
		under, ok := quotaAndBelow(a.s.Quotas(), schedtypes.QuotaName(scope.Name))
		if !ok {
			return nil, false, nil
		}
		match = func(_ schedtypes.QueueName, qt schedtypes.QuotaName) bool { return under[qt] }
	default:
		return nil, false, nil
	}
	if phase == visibilityv1alpha1.PhaseEnqueued {
		return a.pending(match), true, nil
	}
	items, err := a.admitted(ctx, match, phase)
	return items, err == nil, err
}

// pending lists pending units, queue by queue in serving order, each queue in
// scheduling order.
func (a *schedulerSource) pending(match func(schedtypes.QueueName, schedtypes.QuotaName) bool) []visibilityv1alpha1.QueueUnitSummary {
	items := []visibilityv1alpha1.QueueUnitSummary{}
	for _, name := range a.s.QueueNames() {
		units, _ := a.s.Pending(name)
		for _, p := range units {
			if !match(name, p.Quota) {
				continue
			}
			items = append(items, visibilityv1alpha1.QueueUnitSummary{
				ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, CreationTimestamp: metav1.NewTime(p.Created)},
				Phase:      visibilityv1alpha1.PhaseEnqueued, Queue: string(name), Quota: string(p.Quota),
				Priority: p.Priority, PositionInQueue: int32(p.Position), Request: p.Request.ToList(),
			})
		}
	}
	return items
}

// admitted lists the cached units in phase, oldest allocation first.
func (a *schedulerSource) admitted(ctx context.Context, match func(schedtypes.QueueName, schedtypes.QuotaName) bool, phase string) ([]visibilityv1alpha1.QueueUnitSummary, error) {
	list := &schedv1alpha1.QueueUnitList{}
	if err := a.s.Objects().List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	var units []*schedv1alpha1.QueueUnit
	for i := range list.Items {
		u := &list.Items[i]
		if string(u.Status.Phase) != phase {
			continue
		}
		if q, qt := a.s.Map(u); match(q, qt) {
			units = append(units, u)
		}
	}
	slices.SortFunc(units, func(x, y *schedv1alpha1.QueueUnit) int {
		if c := allocated(x).Compare(allocated(y).Time); c != 0 {
			return c
		}
		return strings.Compare(x.Namespace+"/"+x.Name, y.Namespace+"/"+y.Name)
	})
	items := make([]visibilityv1alpha1.QueueUnitSummary, 0, len(units))
	for _, u := range units {
		q, qt := a.s.Map(u)
		items = append(items, visibilityv1alpha1.QueueUnitSummary{
			ObjectMeta: metav1.ObjectMeta{Name: u.Name, Namespace: u.Namespace, CreationTimestamp: u.CreationTimestamp},
			Phase:      phase, Queue: string(q), Quota: string(qt), Priority: queueunit.Priority(u),
			Request: queueunit.Usage(u).ToList(), Message: u.Status.Message,
		})
	}
	return items, nil
}

func allocated(u *schedv1alpha1.QueueUnit) metav1.Time {
	if u.Status.LastAllocateTime != nil {
		return *u.Status.LastAllocateTime
	}
	return u.CreationTimestamp
}

// quotaAndBelow returns name and every quota below it, and whether name exists.
func quotaAndBelow(quotas []schedtypes.Info, name schedtypes.QuotaName) (map[schedtypes.QuotaName]bool, bool) {
	exists := slices.ContainsFunc(quotas, func(q schedtypes.Info) bool { return q.Name == name && q.Exists })
	if !exists {
		return nil, false
	}
	return subtree(childrenOf(quotas), name), true
}

// childrenOf maps each quota to the quotas right below it.
func childrenOf(quotas []schedtypes.Info) map[schedtypes.QuotaName][]schedtypes.QuotaName {
	children := map[schedtypes.QuotaName][]schedtypes.QuotaName{}
	for _, q := range quotas {
		children[q.Parent] = append(children[q.Parent], q.Name)
	}
	return children
}

// subtree returns name and every quota below it.
func subtree(children map[schedtypes.QuotaName][]schedtypes.QuotaName, name schedtypes.QuotaName) map[schedtypes.QuotaName]bool {
	out := map[schedtypes.QuotaName]bool{}
	for todo := []schedtypes.QuotaName{name}; len(todo) > 0; {
		n := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if !out[n] {
			out[n] = true
			todo = append(todo, children[n]...)
		}
	}
	return out
}

// Explain implements Source: a pending unit waits for what the leader last
// wrote in its status.message (the same text as its FailedScheduling event),
// and reason is that of the QuotaReserved=False condition written with it.
func (a *schedulerSource) Explain(ctx context.Context, items []visibilityv1alpha1.QueueUnitSummary) {
	for i := range items {
		it := &items[i]
		if (it.Message != "" && it.Reason != "") || it.Phase != visibilityv1alpha1.PhaseEnqueued {
			continue
		}
		u := &schedv1alpha1.QueueUnit{}
		if err := a.s.Objects().Get(ctx, client.ObjectKey{Namespace: it.Namespace, Name: it.Name}, u, client.UnsafeDisableDeepCopy); err == nil {
			if it.Message == "" {
				it.Message = u.Status.Message
			}
			if it.Reason == "" {
				it.Reason = queueunit.WaitReason(u)
			}
		}
	}
}

func hasQueue(r view.Reader, name schedtypes.QueueName) bool {
	_, ok := r.QueueSettings(name)
	return ok
}
