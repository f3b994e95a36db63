package scheduler

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queue"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
)

// holdingOf is what a unit holds per docs/protocol.md, with what victim
// selection needs to know of it; nil when it holds nothing.
// ceiling is the priority ceiling of the unit's queue (see priorityOf).
func (st *unitState) holdingFor(key string, ceiling *int32) *quota.Holding {
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
// (koord-queue/max-priority) when it has one: a tenant who writes a higher
// priority on a job gets the ceiling, in its queue and as a victim.
func priorityOf(u *v1alpha1.QueueUnit, ceiling *int32) int32 {
	p := ptr.Deref(u.Spec.Priority, 0)
	if ceiling != nil && p > *ceiling {
		return *ceiling
	}
	return p
}

func holdingOf(key, quotaName string, u *v1alpha1.QueueUnit) *quota.Holding {
	used := queueunit.Usage(u)
	if used.IsZero() {
		return nil
	}
	h := &quota.Holding{Key: key, Quota: quotaName, Used: used, Priority: ptr.Deref(u.Spec.Priority, 0), Evicting: isEvicting(u)}
	if u.Status.LastAllocateTime != nil {
		h.AllocatedAt = u.Status.LastAllocateTime.Time
	}
	return h
}

// isEvicting reports whether a unit was told to give its quota back and still holds it.
func isEvicting(u *v1alpha1.QueueUnit) bool {
	return queueunit.HoldsQuota(u.Status.Phase) && meta.IsStatusConditionTrue(u.Status.Conditions, v1alpha1.ConditionEvicted)
}

// preempt looks for victims for a unit that did not fit; it runs under s.mu
// inside a pass. It returns nil when eviction cannot help.
// queuePreempts is the unit's queue's preemption policy (LowerPriority);
// reclaim does not depend on it.
// When nothing can be evicted yet because candidates are protected, the
// answer says until when and which units will go then.
func (s *Scheduler) preempt(ctx context.Context, info *framework.UnitInfo, cohort string, queuePreempts bool) (*queue.Failure, quota.Victims) {
	cfg := s.opts.Config
	// Units whose admission is being written are not victims yet; units
	// being deleted give their quota back anyway, and no sooner if evicted.
	skip := func(key string) bool {
		st := s.units[key]
		return st == nil || st.inflight || st.obj.DeletionTimestamp != nil
	}
	preempt := queuePreempts && ptr.Deref(cfg.EnablePreemption, true)
	v := s.fw.Preempt(ctx, info, preempt, ptr.Deref(cfg.EnableReclaim, true), skip)
	victims := v.Units
	if v.Waiting {
		s.nominated.add(info.Key, cohort)
		return &queue.Failure{Reason: "preempting/" + info.Quota, Preempting: true,
			Message: fmt.Sprintf("waiting for preempted units to give back quota %s; admitted once they have", info.Quota)}, v
	}
	if len(victims) == 0 {
		if !v.RetryAt.IsZero() {
			// Candidates are protected until then: look again at that moment.
			s.wakeups.wakeAt(cohort, v.RetryAt)
		}
		return nil, v
	}
	s.nominated.add(info.Key, cohort)
	kind := "preemption"
	for _, v := range victims {
		if v.Quota != info.Quota {
			kind = "reclaim"
		}
	}
	s.opts.Metrics.Evicted(kind, info.Quota, len(victims))
	names := make([]string, 0, len(victims))
	for _, v := range victims {
		st := s.units[v.Key]
		if st == nil {
			continue
		}
		// Until its eviction is in the API, the victim's object does not say
		// so; remember it, or the next update would make it a candidate again.
		st.evicting = true
		names = append(names, v.Key)
		h := v
		h.Evicting = true
		s.fw.SetUsage(v.Key, &h)
		s.evict(st.obj, v1alpha1.ReasonPreempted,
			fmt.Sprintf("Preempted to admit %s (priority %d) in quota %s", info.Key, info.Priority, info.Quota))
	}
	return &queue.Failure{Reason: "preempting/" + info.Quota, Preempting: true,
		Message: fmt.Sprintf("preempting %d unit(s) (%s) to make room in quota %s; admitted once they give it back",
			len(names), strings.Join(names, ", "), info.Quota)}, v
}

// evict asks a unit to give its quota back: condition Evicted and the
// reclaim state of its admissions. The job extension suspends the job and
// returns the unit to Enqueued (docs/protocol.md).
func (s *Scheduler) evict(u *v1alpha1.QueueUnit, reason, message string) {
	if !s.leading.Load() {
		return
	}
	s.writer.enqueue(keyOf(u), &write{
		base: u, retryOnConflict: true,
		written: func(x *v1alpha1.QueueUnit) { s.recorder.Event(x, corev1.EventTypeWarning, reason, message) },
		mutate: func(x *v1alpha1.QueueUnit) bool {
			if !queueunit.HoldsQuota(x.Status.Phase) || meta.IsStatusConditionTrue(x.Status.Conditions, v1alpha1.ConditionEvicted) {
				return false
			}
			now := metav1.NewTime(s.clock.Now())
			if s.opts.Gates.MaximumExecutionTime {
				bankExecutionTime(x, now.Time)
			}
			setCondition(x, v1alpha1.ConditionEvicted, metav1.ConditionTrue, reason, message, now)
			for i := range x.Status.Admissions {
				x.Status.Admissions[i].ReclaimState = &v1alpha1.ReclaimState{Replicas: x.Status.Admissions[i].Replicas}
			}
			x.Status.LastUpdateTime = &now
			return true
		},
	}, 0)
}
