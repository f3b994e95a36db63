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
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queue"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// maxQueueItemDetails bounds the pending units listed in a Queue's status.
const maxQueueItemDetails = 50

// queueRegistry owns the served Queue objects (namespace
// schedv1alpha1.QueueNamespace) by name, for their admission checks, and their
// priority ceilings (koord-queue/max-priority), when set. Its lock is a leaf.
type queueRegistry struct {
	mu       sync.RWMutex
	objs     map[schedtypes.QueueName]*schedv1alpha1.Queue
	ceilings map[schedtypes.QueueName]*int32
}

func newQueueRegistry() *queueRegistry {
	return &queueRegistry{objs: map[schedtypes.QueueName]*schedv1alpha1.Queue{}, ceilings: map[schedtypes.QueueName]*int32{}}
}

// set records q and its ceiling and reports whether a known queue's ceiling
// changed.
func (r *queueRegistry) set(q *schedv1alpha1.Queue, ceiling *int32) (ceilingChanged bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := schedtypes.QueueName(q.Name)
	r.objs[name] = q
	old, had := r.ceilings[name]
	r.ceilings[name] = ceiling
	return had && !equalCeiling(old, ceiling)
}

func (r *queueRegistry) remove(name schedtypes.QueueName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.objs, name)
	delete(r.ceilings, name)
}

// get returns the served Queue name, or nil.
func (r *queueRegistry) get(name schedtypes.QueueName) *schedv1alpha1.Queue {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.objs[name]
}

// ceiling returns queue name's priority ceiling, or nil.
func (r *queueRegistry) ceiling(name schedtypes.QueueName) *int32 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.ceilings[name]
}

// list returns the served Queues, sorted by name.
func (r *queueRegistry) list() []*schedv1alpha1.Queue {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*schedv1alpha1.Queue, 0, len(r.objs))
	for _, q := range r.objs {
		out = append(out, q)
	}
	slices.SortFunc(out, func(a, b *schedv1alpha1.Queue) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// queueSync follows the Queue objects: it gives the queue manager each
// Queue's settings, keeps the registry, re-queues units whose ceiling
// changed, says why units of a deleted Queue wait, and writes each Queue's
// status.
type queueSync struct {
	*env
	registry *queueRegistry
	cache    *unitCache
	intake   *intake
	reports  *reporter
}

// settingsOf reads a Queue's policy and tuning annotations. A malformed
// annotation is ignored with a warning event on the Queue.
func (qs *queueSync) settingsOf(q *schedv1alpha1.Queue) queue.Settings {
	set := queue.Settings{Name: schedtypes.QueueName(q.Name), Policy: q.Spec.QueuePolicy, Threshold: schedv1alpha1.DefaultPriorityThreshold}
	if set.Policy == "" {
		set.Policy = schedv1alpha1.QueuePolicyPriority
	}
	switch {
	case q.Spec.Priority != nil:
		set.Priority = *q.Spec.Priority
	case q.Spec.PriorityClassName != "":
		pc := &schedulingv1.PriorityClass{}
		if err := qs.client.Get(context.Background(), client.ObjectKey{Name: q.Spec.PriorityClassName}, pc); err == nil { //nolint:forbidigo // a read of the informer cache, which does not wait
			set.Priority = pc.Value
		} else if qs.leader() {
			qs.recorder.Eventf(q, corev1.EventTypeWarning, "PriorityClassNotFound",
				"priorityClassName %s: %v; the queue's priority is 0", q.Spec.PriorityClassName, err)
		}
	}
	bad := func(key, value, want string) {
		if qs.leader() {
			qs.recorder.Eventf(q, corev1.EventTypeWarning, "InvalidAnnotation", "annotation %s=%q is not %s; ignored", key, value, want)
		}
	}
	if v, ok := q.Annotations[schedv1alpha1.PriorityThresholdAnnotation]; ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32); err == nil {
			set.Threshold = int32(n)
		} else {
			bad(schedv1alpha1.PriorityThresholdAnnotation, v, "a 32-bit integer")
		}
	}
	if v, ok := q.Annotations[schedv1alpha1.MaxDepthAnnotation]; ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
			set.MaxDepth = n
		} else {
			bad(schedv1alpha1.MaxDepthAnnotation, v, "a non-negative integer")
		}
	}
	policy := q.Spec.PreemptionPolicy
	if v, ok := q.Annotations[schedv1alpha1.PreemptionPolicyAnnotation]; ok && policy == "" {
		switch p := schedv1alpha1.PreemptionPolicy(strings.TrimSpace(v)); p {
		case schedv1alpha1.PreemptionNever, schedv1alpha1.PreemptionLowerPriority:
			policy = p
		default:
			bad(schedv1alpha1.PreemptionPolicyAnnotation, v, "Never or LowerPriority")
		}
	}
	set.Preempt = policy == schedv1alpha1.PreemptionLowerPriority
	if v, ok := q.Annotations[schedv1alpha1.MaxWaitAnnotation]; ok {
		if d, err := time.ParseDuration(strings.TrimSpace(v)); err == nil && d > 0 {
			set.MaxWait = d
		} else {
			bad(schedv1alpha1.MaxWaitAnnotation, v, "a positive duration such as 30m")
		}
	}
	if q.Spec.HoldRoomForHigherPriority != nil {
		set.HoldRoom = *q.Spec.HoldRoomForHigherPriority
	} else if v, ok := q.Annotations[schedv1alpha1.HoldRoomAnnotation]; ok {
		if b, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
			set.HoldRoom = b
		} else {
			bad(schedv1alpha1.HoldRoomAnnotation, v, "true or false")
		}
	}
	if v, ok := q.Annotations[schedv1alpha1.WaitForPodsRunningAnnotation]; ok {
		if b, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
			set.WaitForPodsRunning = b
		} else {
			bad(schedv1alpha1.WaitForPodsRunningAnnotation, v, "true or false")
		}
	}
	return set
}

// ceilingOf reads a Queue's koord-queue/max-priority: the highest priority
// its units get, whatever they ask; nil when it has none. A malformed value
// is ignored with a warning event.
func (qs *queueSync) ceilingOf(q *schedv1alpha1.Queue) *int32 {
	v, ok := q.Annotations[schedv1alpha1.MaxPriorityAnnotation]
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil {
		if qs.leader() {
			qs.recorder.Eventf(q, corev1.EventTypeWarning, "InvalidAnnotation", "annotation %s=%q is not a 32-bit integer; ignored", schedv1alpha1.MaxPriorityAnnotation, v)
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
// schedv1alpha1.QueueNamespace are; a same-named Queue elsewhere changes nothing.
func (qs *queueSync) served(q *schedv1alpha1.Queue) bool {
	if q.Namespace == schedv1alpha1.QueueNamespace {
		return true
	}
	if qs.leader() {
		qs.recorder.Eventf(q, corev1.EventTypeWarning, "QueueIgnored",
			"only Queues in namespace %s are served; units of quota %s wait in Queue %s/%s, and this Queue changes nothing",
			schedv1alpha1.QueueNamespace, q.Name, schedv1alpha1.QueueNamespace, q.Name)
	}
	return false
}

func (qs *queueSync) onQueue(obj any) {
	q, ok := obj.(*schedv1alpha1.Queue)
	if !ok || !qs.served(q) {
		return
	}
	set := qs.settingsOf(q)
	if qs.registry.set(q, qs.ceilingOf(q)) {
		// The queue's units take the new ceiling: in their order and as victims.
		qs.cache.recharge(set.Name)
		for _, p := range qs.cache.pending(set.Name) {
			qs.intake.enqueue(p.obj, p.st, set.Name, p.quota, true)
		}
	}
	if cur, ok := qs.queues.QueueSettings(set.Name); ok && cur == set {
		return
	}
	qs.queues.UpsertQueue(set)
}

func (qs *queueSync) onQueueDelete(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	q, ok := obj.(*schedv1alpha1.Queue)
	if !ok || q.Namespace != schedv1alpha1.QueueNamespace {
		return
	}
	name := schedtypes.QueueName(q.Name)
	qs.registry.remove(name)
	qs.queues.DeleteQueue(name)
	// Its units stay pending and say why.
	for _, key := range qs.queues.Orphans()[name] {
		if u, _ := qs.cache.object(key); u != nil {
			qs.reports.queueNotFound(u, name)
		}
	}
}

// resync re-reads the settings of every Queue whose priority comes from a
// PriorityClass (one changed).
func (qs *queueSync) resync() {
	for _, q := range qs.registry.list() {
		if q.Spec.Priority == nil && q.Spec.PriorityClassName != "" {
			qs.onQueue(q)
		}
	}
}

// updateStatuses writes each Queue's pending list and counts, only where
// they changed.
func (qs *queueSync) updateStatuses(ctx context.Context) {
	if qs.opts.Fence != nil && !qs.opts.Fence() {
		return
	}
	admitted := map[schedtypes.QueueName]int32{}
	qs.cache.each(func(r unitRecord) {
		if r.holding || r.inflight {
			admitted[r.queue]++
		}
	})
	for _, obj := range qs.registry.list() {
		name := schedtypes.QueueName(obj.Name)
		pending, ok := qs.queues.Pending(name)
		if !ok {
			continue
		}
		status := schedv1alpha1.QueueStatus{Pending: int32(len(pending)), Admitted: admitted[name]}
		for i, p := range pending {
			if i >= maxQueueItemDetails {
				break
			}
			status.QueueItemDetails = append(status.QueueItemDetails, schedv1alpha1.QueueItemDetail{
				Name: p.Name, Namespace: p.Namespace, Priority: p.Priority, Position: int32(p.Position),
			})
		}
		q := &schedv1alpha1.Queue{}
		if err := qs.client.Get(ctx, client.ObjectKey{Namespace: schedv1alpha1.QueueNamespace, Name: string(name)}, q); err != nil {
			continue
		}
		if equality.Semantic.DeepEqual(q.Status, status) {
			continue
		}
		want := q.DeepCopy()
		want.Status = status
		if err := qs.client.Status().Patch(ctx, want, client.MergeFrom(q)); err != nil {
			klog.FromContext(ctx).V(2).Info("Queue status write failed", "queue", string(name), "err", err)
		}
	}
}
