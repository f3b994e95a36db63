package scheduler

import (
	"context"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queue"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
)

// maxQueueItemDetails bounds the pending units listed in a Queue's status.
const maxQueueItemDetails = 50

// settingsOf reads a Queue's policy and tuning annotations. A malformed
// annotation is ignored with a warning event on the Queue.
func (s *Scheduler) settingsOf(q *v1alpha1.Queue) queue.Settings {
	set := queue.Settings{Name: q.Name, Policy: q.Spec.QueuePolicy, Threshold: v1alpha1.DefaultPriorityThreshold}
	if set.Policy == "" {
		set.Policy = v1alpha1.QueuePolicyPriority
	}
	switch {
	case q.Spec.Priority != nil:
		set.Priority = *q.Spec.Priority
	case q.Spec.PriorityClassName != "":
		pc := &schedulingv1.PriorityClass{}
		if err := s.client.Get(context.Background(), client.ObjectKey{Name: q.Spec.PriorityClassName}, pc); err == nil {
			set.Priority = pc.Value
		} else if s.leading.Load() {
			s.recorder.Eventf(q, corev1.EventTypeWarning, "PriorityClassNotFound",
				"priorityClassName %s: %v; the queue's priority is 0", q.Spec.PriorityClassName, err)
		}
	}
	bad := func(key, value, want string) {
		if s.leading.Load() {
			s.recorder.Eventf(q, corev1.EventTypeWarning, "InvalidAnnotation", "annotation %s=%q is not %s; ignored", key, value, want)
		}
	}
	if v, ok := q.Annotations[v1alpha1.PriorityThresholdAnnotation]; ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32); err == nil {
			set.Threshold = int32(n)
		} else {
			bad(v1alpha1.PriorityThresholdAnnotation, v, "a 32-bit integer")
		}
	}
	if v, ok := q.Annotations[v1alpha1.MaxDepthAnnotation]; ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
			set.MaxDepth = n
		} else {
			bad(v1alpha1.MaxDepthAnnotation, v, "a non-negative integer")
		}
	}
	policy := q.Spec.PreemptionPolicy
	if v, ok := q.Annotations[v1alpha1.PreemptionPolicyAnnotation]; ok && policy == "" {
		switch p := v1alpha1.PreemptionPolicy(strings.TrimSpace(v)); p {
		case v1alpha1.PreemptionNever, v1alpha1.PreemptionLowerPriority:
			policy = p
		default:
			bad(v1alpha1.PreemptionPolicyAnnotation, v, "Never or LowerPriority")
		}
	}
	set.Preempt = policy == v1alpha1.PreemptionLowerPriority
	if v, ok := q.Annotations[v1alpha1.MaxWaitAnnotation]; ok {
		if d, err := time.ParseDuration(strings.TrimSpace(v)); err == nil && d > 0 {
			set.MaxWait = d
		} else {
			bad(v1alpha1.MaxWaitAnnotation, v, "a positive duration such as 30m")
		}
	}
	if v, ok := q.Annotations[v1alpha1.WaitForPodsRunningAnnotation]; ok {
		if b, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
			set.WaitForPodsRunning = b
		} else {
			bad(v1alpha1.WaitForPodsRunningAnnotation, v, "true or false")
		}
	}
	return set
}

// ceilingOf reads a Queue's koord-queue/max-priority: the highest priority
// its units get, whatever they ask; nil when it has none. A malformed value
// is ignored with a warning event.
func (s *Scheduler) ceilingOf(q *v1alpha1.Queue) *int32 {
	v, ok := q.Annotations[v1alpha1.MaxPriorityAnnotation]
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil {
		if s.leading.Load() {
			s.recorder.Eventf(q, corev1.EventTypeWarning, "InvalidAnnotation", "annotation %s=%q is not a 32-bit integer; ignored", v1alpha1.MaxPriorityAnnotation, v)
		}
		return nil
	}
	c := int32(n)
	return &c
}

func equalCeiling(a, b *int32) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// served reports whether koord-queue serves Queue q: only Queues in
// v1alpha1.QueueNamespace are; a same-named Queue elsewhere changes nothing.
func (s *Scheduler) served(q *v1alpha1.Queue) bool {
	if q.Namespace == v1alpha1.QueueNamespace {
		return true
	}
	if s.leading.Load() {
		s.recorder.Eventf(q, corev1.EventTypeWarning, "QueueIgnored",
			"only Queues in namespace %s are served; units of quota %s wait in Queue %s/%s, and this Queue changes nothing",
			v1alpha1.QueueNamespace, q.Name, v1alpha1.QueueNamespace, q.Name)
	}
	return false
}

func (s *Scheduler) onQueue(obj any) {
	q, ok := obj.(*v1alpha1.Queue)
	if !ok || !s.served(q) {
		return
	}
	set := s.settingsOf(q)
	ceiling := s.ceilingOf(q)
	s.mu.Lock()
	s.queueObjs[q.Name] = q
	old, had := s.ceilings[q.Name]
	s.ceilings[q.Name] = ceiling
	type pending struct {
		obj   *v1alpha1.QueueUnit
		st    *unitState
		quota string
	}
	var requeue []pending
	if had && !equalCeiling(old, ceiling) {
		// The queue's units take the new ceiling: in their order and as victims.
		for key, st := range s.units {
			if st.queue != q.Name {
				continue
			}
			if queueunit.IsPending(st.obj.Status.Phase) && !st.inflight {
				requeue = append(requeue, pending{st.obj, st, st.quota})
			} else if st.holding {
				s.fw.SetUsage(key, st.holdingFor(key, ceiling))
			}
		}
	}
	s.mu.Unlock()
	for _, p := range requeue {
		s.enqueue(p.obj, p.st, q.Name, p.quota, true)
	}
	if cur, ok := s.queues.QueueSettings(q.Name); ok && cur == set {
		return
	}
	s.queues.UpsertQueue(set)
}

func (s *Scheduler) onQueueDelete(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	q, ok := obj.(*v1alpha1.Queue)
	if !ok || q.Namespace != v1alpha1.QueueNamespace {
		return
	}
	s.mu.Lock()
	delete(s.queueObjs, q.Name)
	delete(s.ceilings, q.Name)
	s.mu.Unlock()
	s.queues.DeleteQueue(q.Name)
	// Its units stay pending and say why.
	for _, key := range s.queues.Orphans()[q.Name] {
		s.mu.Lock()
		st := s.units[key]
		var u *v1alpha1.QueueUnit
		if st != nil {
			u = st.obj
		}
		s.mu.Unlock()
		if u != nil {
			s.reportWaiting(u, &queue.Failure{Reason: reasonQueueNotFound,
				Message: "queue " + q.Name + " not found: the unit is admitted as soon as it exists"})
		}
	}
}

// updateQueueStatuses writes each Queue's pending list and counts, only where
// they changed.
func (s *Scheduler) updateQueueStatuses(ctx context.Context) {
	admitted := map[string]int32{}
	s.mu.Lock()
	for _, st := range s.units {
		if st.holding || st.inflight {
			admitted[st.queue]++
		}
	}
	names := make([]string, 0, len(s.queueObjs))
	for name := range s.queueObjs {
		names = append(names, name)
	}
	s.mu.Unlock()
	for _, name := range names {
		pending, ok := s.queues.Pending(name)
		if !ok {
			continue
		}
		status := v1alpha1.QueueStatus{Pending: int32(len(pending)), Admitted: admitted[name]}
		for i, p := range pending {
			if i >= maxQueueItemDetails {
				break
			}
			status.QueueItemDetails = append(status.QueueItemDetails, v1alpha1.QueueItemDetail{
				Name: p.Name, Namespace: p.Namespace, Priority: p.Priority, Position: int32(p.Position),
			})
		}
		q := &v1alpha1.Queue{}
		if err := s.client.Get(ctx, client.ObjectKey{Namespace: v1alpha1.QueueNamespace, Name: name}, q); err != nil {
			continue
		}
		if equality.Semantic.DeepEqual(q.Status, status) {
			continue
		}
		want := q.DeepCopy()
		want.Status = status
		if err := s.client.Status().Patch(ctx, want, client.MergeFrom(q)); err != nil {
			klog.FromContext(ctx).V(2).Info("Queue status write failed", "queue", name, "err", err)
		}
	}
}
