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
	"fmt"
	"strings"
	"sync"

	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
)

// holdingFor is what a unit holds per docs/protocol.md (holdingOf), with
// what victim selection needs to know of it; nil when it holds nothing.
// ceiling is the priority ceiling of the unit's queue (see priorityOf).
func (st *unitState) holdingFor(key schedtypes.UnitKey, ceiling *int32) *schedtypes.Holding {
	h := holdingOf(key, st.quota, st.obj)
	if h != nil {
		h.Priority = priorityOf(st.obj, ceiling)
		if st.evicting {
			h.Evicting = true
		}
	}
	return h
}

// priorityOf is a unit's priority, bounded by its queue's ceiling
// (koord-queue/max-priority), else by schedv1alpha1.DefaultMaxPriority: a
// tenant who writes a higher priority on a job gets the ceiling, in its
// queue and as a victim.
func priorityOf(u *schedv1alpha1.QueueUnit, ceiling *int32) int32 {
	p, c := queueunit.Priority(u), schedv1alpha1.DefaultMaxPriority
	if ceiling != nil {
		c = *ceiling
	}
	return min(p, c)
}

func holdingOf(key schedtypes.UnitKey, quotaName schedtypes.QuotaName, u *schedv1alpha1.QueueUnit) *schedtypes.Holding {
	used := queueunit.Usage(u)
	if used.IsZero() {
		return nil
	}
	h := &schedtypes.Holding{Key: key, Quota: quotaName, Used: used, Priority: queueunit.Priority(u), Evicting: queueunit.IsEvicting(u)}
	if u.Spec.ConsumerRef != nil {
		h.Consumer = u.Spec.ConsumerRef.UID
	}
	if u.Status.LastAllocateTime != nil {
		h.AllocatedAt = u.Status.LastAllocateTime.Time
	}
	return h
}

// preemptor finds room for units that do not fit by evicting others, and
// owns the nominations: the units waiting for their victims to give quota
// back. While a unit is nominated, units of its cohort that would borrow
// wait (borrowingPaused), so they do not take the room being made.
type preemptor struct {
	*env
	cache   *unitCache
	reports *reporter
	wakeups *wakeups

	mu        sync.Mutex
	nominated nominations
}

// preempt looks for victims for a unit that did not fit; it runs under the
// cache's lock inside a pass (decide). It returns nil when eviction cannot
// help. queuePreempts is the unit's queue's preemption policy
// (LowerPriority); reclaim does not depend on it. When nothing can be
// evicted yet because candidates are protected, the answer says until when
// and which units will go then.
func (p *preemptor) preempt(ctx context.Context, info *framework.UnitInfo, cohort schedtypes.CohortName, queuePreempts bool) (*schedtypes.Failure, schedtypes.Victims) {
	cfg := p.opts.Config
	skip := func(key schedtypes.UnitKey) bool { return !p.cache.candidateLocked(key) }
	preempt := queuePreempts && ptr.Deref(cfg.EnablePreemption, true)
	v := p.fw.Preempt(ctx, info, preempt, ptr.Deref(cfg.EnableReclaim, true), skip)
	victims := v.Units
	if v.Waiting {
		p.nominate(info.Key, cohort)
		return &schedtypes.Failure{Reason: schedtypes.Reason{Kind: schedtypes.WaitPreempting, Subject: string(info.Quota)}, Preempting: true,
			Message: fmt.Sprintf("waiting for preempted units to give back quota %s; admitted once they have", info.Quota)}, v
	}
	if len(victims) == 0 {
		if !v.RetryAt.IsZero() {
			// Candidates are protected until then: look again at that moment.
			p.wakeups.wakeAt(cohort, v.RetryAt)
		}
		return nil, v
	}
	p.nominate(info.Key, cohort)
	kind := "preemption"
	for _, v := range victims {
		if v.Quota != info.Quota {
			kind = "reclaim"
		}
	}
	p.opts.Metrics.Evicted(kind, string(info.Quota), len(victims))
	names := make([]string, 0, len(victims))
	for _, h := range victims {
		obj := p.cache.evictingLocked(h)
		if obj == nil {
			continue
		}
		names = append(names, string(h.Key))
		p.reports.evict(obj, schedv1alpha1.ReasonPreempted,
			fmt.Sprintf("Preempted to admit %s (priority %d) in quota %s", info.Key, info.Priority, info.Quota))
	}
	return &schedtypes.Failure{Reason: schedtypes.Reason{Kind: schedtypes.WaitPreempting, Subject: string(info.Quota)}, Preempting: true,
		Message: fmt.Sprintf("preempting %d unit(s) (%s) to make room in quota %s; admitted once they give it back",
			len(names), strings.Join(names, ", "), info.Quota)}, v
}

func (p *preemptor) nominate(key schedtypes.UnitKey, cohort schedtypes.CohortName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nominated.add(key, cohort)
}

// unnominate ends unit key's nomination, if any; units of its cohort paused
// for it are worth trying again (it gives back no room: those refused for
// want of room wait on).
func (p *preemptor) unnominate(key schedtypes.UnitKey) {
	p.mu.Lock()
	cohort := p.nominated.remove(key)
	p.mu.Unlock()
	if cohort != "" {
		p.queues.Moved(cohort)
	}
}

var _ unitFollower = (*preemptor)(nil)

// unitChanged ends the nomination of a unit that no longer waits.
func (p *preemptor) unitChanged(ch unitChange) {
	switch ch.kind {
	case changeAdmitted, changeDeleting, changeDeleted:
		p.unnominate(ch.key)
	}
}

// isNominated reports whether unit key waits for its victims.
func (p *preemptor) isNominated(key schedtypes.UnitKey) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.nominated.byUnit[key]
	return ok
}

// borrowingPaused holds back a unit that would borrow above its min while
// room is being made for a nominated unit of the same cohort.
func (p *preemptor) borrowingPaused(info *framework.UnitInfo, cohort schedtypes.CohortName) *schedtypes.Failure {
	p.mu.Lock()
	key := p.nominated.other(cohort, info.Key)
	p.mu.Unlock()
	if key == "" || !p.fw.WouldBorrow(info) {
		return nil
	}
	// Tried again only once the cohort changes: room freed or a nomination
	// ended (unnominate). The reason names the preemptor, so its text is true.
	return &schedtypes.Failure{Reason: schedtypes.Reason{Kind: schedtypes.WaitBorrowingPaused, Subject: string(key)}, HeldBack: true, UntilCohortChanges: true,
		Message: borrowingPausedMessage(info.Quota, key)}
}
