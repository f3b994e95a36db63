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

package leaderworkerset

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	lwsv1 "sigs.k8s.io/lws/api/leaderworkerset/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
)

// Event reasons, besides the framework's.
const (
	// EventEvicted: a group's pods were deleted because its unit was evicted
	// or its group grew.
	EventEvicted = "Evicted"
	// EventGroupRemoved: a group's unit finished because spec.replicas went
	// below it.
	EventGroupRemoved = "GroupRemoved"
)

// conflictRetry is how soon a write that lost a race is tried again.
const conflictRetry = 100 * time.Millisecond

// Reconciler keeps a LeaderWorkerSet's groups, their pods and their units in
// step. The key of a reconcile is the LeaderWorkerSet's.
type Reconciler struct {
	client   client.Client
	ext      *framework.Extension
	recorder events.EventRecorder
	clock    clock.PassiveClock
	opts     framework.ReconcilerOptions

	// told holds, by set, what was told once: the set or its pods that run
	// outside the queue, a group's growth per admission; pruned to what exists.
	told framework.Told
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// NewReconciler builds the LeaderWorkerSets' reconciler.
func NewReconciler(c client.Client, ext *framework.Extension, recorder events.EventRecorder, clk clock.PassiveClock, opts framework.ReconcilerOptions) *Reconciler {
	return &Reconciler{client: c, ext: ext, recorder: recorder, clock: clk, opts: opts}
}

// SetupWithManager watches LeaderWorkerSets, their held pods and their units.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(r.ext.Name).
		For(&lwsv1.LeaderWorkerSet{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(podToSet)).
		Watches(&schedv1alpha1.QueueUnit{}, handler.EnqueueRequestsFromMapFunc(unitToSet)).
		WithOptions(controller.Options{SkipNameValidation: ptr.To(r.opts.SkipNameValidation), MaxConcurrentReconciles: max(r.opts.Workers, 1)}).
		Complete(r)
}

func podToSet(_ context.Context, obj client.Object) []reconcile.Request {
	p, ok := obj.(*corev1.Pod)
	if !ok || !HoldsPod(p) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: p.Namespace, Name: p.Labels[lwsv1.SetNameLabelKey]}}}
}

func unitToSet(_ context.Context, obj client.Object) []reconcile.Request {
	unit, ok := obj.(*schedv1alpha1.QueueUnit)
	if !ok || !ofSets(unit) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: unit.Namespace, Name: unit.Spec.ConsumerRef.Name}}}
}

// ofSets reports a unit whose consumer is a LeaderWorkerSet.
func ofSets(unit *schedv1alpha1.QueueUnit) bool {
	ref := unit.Spec.ConsumerRef
	return ref != nil && ref.Kind == "LeaderWorkerSet" && ref.APIVersion == lwsv1.SchemeGroupVersion.String()
}

// group is one group of a set: its index, unit and pods.
type group struct {
	index int32
	unit  *schedv1alpha1.QueueUnit
	pods  []*corev1.Pod
}

// Reconcile reads a set, its pods and units, and brings each group in step.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	l := &lwsv1.LeaderWorkerSet{}
	if err := r.client.Get(ctx, req.NamespacedName, l); err != nil {
		if apierrors.IsNotFound(err) {
			// A deleted set's units go with it (owner references).
			r.told.Keep(req.NamespacedName, nil)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if l.DeletionTimestamp != nil || !r.managed(ctx, l) {
		return ctrl.Result{}, nil
	}
	groups, err := r.groups(ctx, l)
	if err != nil {
		return ctrl.Result{}, err
	}
	r.forget(req.NamespacedName, l, groups)
	sets, err := r.podSets(ctx, l)
	if err != nil {
		var api apierrors.APIStatus
		if errors.As(err, &api) {
			return ctrl.Result{}, err
		}
		r.recorder.Eventf(l, nil, corev1.EventTypeWarning, framework.EventInvalidJob, "Queue", "cannot queue LeaderWorkerSet: %v", err)
		return ctrl.Result{}, nil
	}
	var result ctrl.Result
	for _, g := range groups {
		res, err := r.syncGroup(ctx, l, sets, g)
		if err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) || apierrors.IsAlreadyExists(err) {
				return ctrl.Result{RequeueAfter: conflictRetry}, nil
			}
			return ctrl.Result{}, err
		}
		if res.RequeueAfter > 0 && (result.RequeueAfter == 0 || res.RequeueAfter < result.RequeueAfter) {
			result = res
		}
	}
	return result, nil
}

// managed: the set asked for the queue and the webhook held it, which it
// marks by the quota label on both templates. A set that asked but whose
// templates lack the label was created while the webhook was away: its pods
// were never gated and it runs outside the queue, as a bare pod does; it is
// told so once.
func (r *Reconciler) managed(ctx context.Context, l *lwsv1.LeaderWorkerSet) bool {
	quota, agree := TemplateQuota(l)
	if quota != "" {
		if !agree {
			r.recorder.Eventf(l, nil, corev1.EventTypeWarning, framework.EventInvalidJob, "Queue",
				"cannot queue LeaderWorkerSet: its leader and worker templates name different quotas (label %s)", schedv1alpha1.QuotaNameLabel)
			return false
		}
		return true
	}
	if !framework.AskedForQueue(Wrap(l)) {
		return false
	}
	if r.told.Once(client.ObjectKeyFromObject(l), toldSet(l)) {
		ctrl.LoggerFrom(ctx).V(2).Info("LeaderWorkerSet created without the webhook runs outside the queue", "leaderWorkerSet", klog.KObj(l))
		r.recorder.Eventf(l, nil, corev1.EventTypeWarning, framework.EventLeftAlone, "Queue",
			"its pod templates have no label %s (created while the webhook was away): its pods are not held and run outside the queue; koord-queue neither counts nor evicts them. Recreate it to queue it", schedv1alpha1.QuotaNameLabel)
	}
	return false
}

// groups are the set's groups: every index below spec.replicas, and every
// index above it that still has a unit or pods (scaled down).
func (r *Reconciler) groups(ctx context.Context, l *lwsv1.LeaderWorkerSet) ([]*group, error) {
	byIndex := map[int32]*group{}
	get := func(i int32) *group {
		if byIndex[i] == nil {
			byIndex[i] = &group{index: i}
		}
		return byIndex[i]
	}
	for i := range Replicas(l) {
		get(i)
	}
	pods := &corev1.PodList{}
	if err := r.client.List(ctx, pods, client.InNamespace(l.Namespace), client.MatchingLabels{lwsv1.SetNameLabelKey: l.Name}); err != nil {
		return nil, fmt.Errorf("list pods of LeaderWorkerSet: %w", err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if i, ok := GroupOf(p); ok && HoldsPod(p) {
			g := get(i)
			g.pods = append(g.pods, p)
		}
	}
	units := &schedv1alpha1.QueueUnitList{}
	if err := r.client.List(ctx, units, client.InNamespace(l.Namespace), client.MatchingLabels{lwsv1.SetNameLabelKey: l.Name}); err != nil {
		return nil, fmt.Errorf("list queue units of LeaderWorkerSet: %w", err)
	}
	for i := range units.Items {
		u := &units.Items[i]
		if !ofSets(u) || u.Spec.ConsumerRef.UID != l.UID {
			continue
		}
		n, err := strconv.ParseInt(u.Labels[lwsv1.GroupIndexLabelKey], 10, 32)
		if err != nil || n < 0 {
			continue
		}
		get(int32(n)).unit = u
	}
	out := make([]*group, 0, len(byIndex))
	for _, g := range byIndex {
		out = append(out, g)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].index < out[b].index })
	return out, nil
}

// podSets are a group's pod sets with the namespace's LimitRange defaults,
// as its pods will get them.
func (r *Reconciler) podSets(ctx context.Context, l *lwsv1.LeaderWorkerSet) ([]framework.PodSet, error) {
	sets, err := GroupPodSets(l)
	if err != nil {
		return nil, err
	}
	ranges := &corev1.LimitRangeList{}
	if err := r.client.List(ctx, ranges, client.InNamespace(l.Namespace)); err != nil {
		return nil, fmt.Errorf("list limit ranges: %w", err)
	}
	return framework.WithLimitRangeDefaults(sets, ranges.Items), nil
}

// syncGroup acts on one group.
func (r *Reconciler) syncGroup(ctx context.Context, l *lwsv1.LeaderWorkerSet, sets []framework.PodSet, g *group) (ctrl.Result, error) {
	wanted := g.index < Replicas(l)
	unit := g.unit
	switch {
	case unit == nil && wanted:
		return ctrl.Result{}, r.createUnit(ctx, l, sets, g)
	case unit == nil:
		return ctrl.Result{}, nil // a removed group's pods on their way out
	case unit.DeletionTimestamp != nil:
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	case !wanted:
		return ctrl.Result{}, r.removed(ctx, l, g)
	case queueunit.IsFinished(unit.Status.Phase):
		// The group was removed and is wanted again: a fresh unit.
		return ctrl.Result{}, r.deleteUnit(ctx, unit)
	}
	desired := unit.DeepCopy()
	now := r.now()
	phase := unit.Status.Phase
	var err error
	switch {
	case queueunit.IsEvicting(unit):
		if r.letGo(ctx, g, unit, "deleted: queue unit %s was evicted, and a pod cannot be suspended") {
			queueunit.Requeue(desired, queueunit.ReasonRequeued, "evicted group holds no pods", now)
		}
	case phase == schedv1alpha1.QueueUnitPhaseDequeued || phase == schedv1alpha1.QueueUnitPhaseRunning:
		if grew := framework.Exceeds(sets, queueunit.AdmittedWith(unit)); grew != "" {
			if r.told.Once(client.ObjectKeyFromObject(l), toldGrew(unit)) {
				r.recorder.Eventf(l, unit, corev1.EventTypeWarning, framework.EventJobGrew, "Hold", "group %d: %s; its pods are deleted and it is queued again at the new size", g.index, grew)
			}
			if r.letGo(ctx, g, unit, "deleted: the group of queue unit %s grew beyond its admission") {
				queueunit.Requeue(desired, queueunit.ReasonJobGrew, grew, now)
			}
			break
		}
		err = r.admit(ctx, unit, g)
		queueunit.ReportPods(desired, r.count(g), now)
	default:
		// Waiting: the spec follows the set; the pods keep their gate.
		if err := r.syncSpec(ctx, l, sets, unit); err != nil {
			return ctrl.Result{}, err
		}
		r.outside(l, g)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if equality.Semantic.DeepEqual(unit.Status, desired.Status) {
		return ctrl.Result{}, nil
	}
	if err := r.client.Status().Patch(ctx, desired, client.MergeFromWithOptions(unit, client.MergeFromWithOptimisticLock{})); err != nil {
		return ctrl.Result{}, fmt.Errorf("update queue unit status: %w", err)
	}
	return ctrl.Result{}, nil
}

func (r *Reconciler) now() metav1.Time { return metav1.NewTime(r.clock.Now().Truncate(time.Second)) }

// spec is the unit's spec for the set's group.
func (r *Reconciler) spec(ctx context.Context, l *lwsv1.LeaderWorkerSet, sets []framework.PodSet) (schedv1alpha1.QueueUnitSpec, error) {
	gj := Wrap(l)
	prio, err := framework.JobPriority(ctx, r.client, gj, sets)
	if err != nil {
		return schedv1alpha1.QueueUnitSpec{}, err
	}
	spec, err := framework.DesiredSpec(r.ext, gj, sets, prio, r.opts.Gates)
	if err != nil {
		return spec, err
	}
	// The templates' quota: the set's label, or --default-quota under
	// --manage-all-jobs, as the webhook wrote it.
	spec.Queue, _ = TemplateQuota(l)
	return spec, nil
}

func (r *Reconciler) createUnit(ctx context.Context, l *lwsv1.LeaderWorkerSet, sets []framework.PodSet, g *group) error {
	spec, err := r.spec(ctx, l, sets)
	if err != nil {
		var api apierrors.APIStatus
		if errors.As(err, &api) {
			return err
		}
		r.recorder.Eventf(l, nil, corev1.EventTypeWarning, framework.EventInvalidJob, "Queue", "cannot queue LeaderWorkerSet: %v", err)
		return nil
	}
	unit := &schedv1alpha1.QueueUnit{
		ObjectMeta: metav1.ObjectMeta{
			Name: UnitName(r.ext, l.Name, g.index), Namespace: l.Namespace,
			Labels: map[string]string{
				schedv1alpha1.QuotaNameLabel: spec.Queue,
				lwsv1.SetNameLabelKey:        l.Name,
				lwsv1.GroupIndexLabelKey:     strconv.Itoa(int(g.index)),
			},
			Annotations: map[string]string{
				schedv1alpha1.JobCreatedAtAnnotation: queueunit.FormatCreated(queueunit.JobCreated(l.CreationTimestamp, l.Annotations)),
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: lwsv1.SchemeGroupVersion.String(), Kind: "LeaderWorkerSet", Name: l.Name, UID: l.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: spec,
	}
	if err := r.client.Create(ctx, unit); err != nil {
		return fmt.Errorf("create queue unit: %w", err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Created queue unit", "queueUnit", klog.KObj(unit), "group", g.index)
	r.recorder.Eventf(l, unit, corev1.EventTypeNormal, framework.EventQueueUnitCreated, "Queue", "created queue unit %s for group %d", unit.Name, g.index)
	return nil
}

// syncSpec keeps a waiting unit's pod sets, requests and priority in step
// with the set (a changed size or template while it waits).
func (r *Reconciler) syncSpec(ctx context.Context, l *lwsv1.LeaderWorkerSet, sets []framework.PodSet, unit *schedv1alpha1.QueueUnit) error {
	spec, err := r.spec(ctx, l, sets)
	if err != nil {
		// Told when the unit was made; the unit keeps its spec.
		return nil
	}
	desired := unit.DeepCopy()
	desired.Spec.PodSet, desired.Spec.Resource, desired.Spec.Request = spec.PodSet, spec.Resource, spec.Request
	desired.Spec.Priority, desired.Spec.PriorityClassName = spec.Priority, spec.PriorityClassName
	if equality.Semantic.DeepEqual(unit.Spec, desired.Spec) {
		return nil
	}
	if err := r.client.Patch(ctx, desired, client.MergeFromWithOptions(unit, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("update queue unit spec: %w", err)
	}
	return nil
}

// admit removes the gate from every held pod of the group, labelling it
// with its unit; pods its StatefulSets make later are let go too.
func (r *Reconciler) admit(ctx context.Context, unit *schedv1alpha1.QueueUnit, g *group) error {
	labels := framework.PodLabels(unit.Spec.Queue, unit.Name)
	for _, p := range g.pods {
		if !framework.Gated(p) || p.DeletionTimestamp != nil {
			continue
		}
		after := p.DeepCopy()
		framework.Ungate(after)
		framework.SetLabels(&after.Labels, labels, "metadata")
		if err := r.client.Patch(ctx, after, client.MergeFromWithOptions(p, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("remove scheduling gate of pod %s: %w", p.Name, err)
		}
		r.recorder.Eventf(p, nil, corev1.EventTypeNormal, framework.EventResumed, "Resume", "scheduling gate removed: queue unit %s is admitted", unit.Name)
	}
	return nil
}

// letGo deletes the group's pods that were let go and still run (its
// StatefulSets make them again, held by the gate), and reports whether none
// is left: every pod of the group is held or ended, none terminating.
func (r *Reconciler) letGo(ctx context.Context, g *group, unit *schedv1alpha1.QueueUnit, why string) bool {
	gone := true
	for _, p := range g.pods {
		if ended(p) || (framework.Gated(p) && p.DeletionTimestamp == nil) {
			continue
		}
		gone = false
		if p.DeletionTimestamp != nil {
			continue
		}
		if err := r.client.Delete(ctx, p, client.Preconditions{UID: ptr.To(p.UID)}); err != nil && !apierrors.IsNotFound(err) {
			ctrl.LoggerFrom(ctx).Error(err, "Delete pod of an evicted group", "pod", klog.KObj(p))
			continue
		}
		r.recorder.Eventf(p, unit, corev1.EventTypeWarning, EventEvicted, "Evict", why, unit.Name)
	}
	return gone
}

func ended(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// removed finishes the unit of a group spec.replicas no longer has, once
// its pods are gone (the scheduler never charges less than what runs), and
// so gives its quota back.
func (r *Reconciler) removed(ctx context.Context, l *lwsv1.LeaderWorkerSet, g *group) error {
	unit := g.unit
	if queueunit.IsFinished(unit.Status.Phase) {
		return nil
	}
	for _, p := range g.pods {
		if !ended(p) && !framework.Gated(p) {
			return nil // its pods' deletion brings us back
		}
	}
	desired := unit.DeepCopy()
	msg := fmt.Sprintf("group %d was removed: the LeaderWorkerSet has %d groups now", g.index, Replicas(l))
	queueunit.MarkFinished(desired, false, msg, r.now())
	if err := r.client.Status().Patch(ctx, desired, client.MergeFromWithOptions(unit, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("finish queue unit: %w", err)
	}
	r.recorder.Eventf(l, unit, corev1.EventTypeNormal, EventGroupRemoved, "Finish", "%s; its queue unit %s finished", msg, unit.Name)
	return nil
}

func (r *Reconciler) deleteUnit(ctx context.Context, unit *schedv1alpha1.QueueUnit) error {
	if err := r.client.Delete(ctx, unit, client.Preconditions{UID: ptr.To(unit.UID)}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete queue unit: %w", err)
	}
	return nil
}

// outside tells a pod of a waiting group that came without the gate (made
// while the webhook was away) that it runs outside the queue.
func (r *Reconciler) outside(l *lwsv1.LeaderWorkerSet, g *group) {
	for _, p := range g.pods {
		if framework.Gated(p) || ended(p) || p.DeletionTimestamp != nil || p.Labels[schedv1alpha1.QueueUnitLabel] != "" {
			continue
		}
		if !r.told.Once(client.ObjectKeyFromObject(l), toldPod(p)) {
			continue
		}
		r.recorder.Eventf(p, nil, corev1.EventTypeWarning, framework.EventLeftAlone, "Queue",
			"pod was created without the scheduling gate %s (the webhook was not called): it runs outside the queue; koord-queue counts its requests against its quota as usage it does not manage, and never evicts it", framework.SchedulingGate)
	}
}

// What the set's reconciler tells once: the set itself, one of its pods,
// one admission of a group that grew.
func toldSet(l *lwsv1.LeaderWorkerSet) string { return "set/" + string(l.UID) }
func toldPod(p *corev1.Pod) string            { return "pod/" + string(p.UID) }
func toldGrew(u *schedv1alpha1.QueueUnit) string {
	return "grew/" + string(u.UID) + "/" + queueunit.DequeuedAt(u).String()
}

// forget drops what was told about things of set l that are gone: its
// pods and units now are those of groups.
func (r *Reconciler) forget(key types.NamespacedName, l *lwsv1.LeaderWorkerSet, groups []*group) {
	now := map[string]bool{toldSet(l): true}
	for _, g := range groups {
		for _, p := range g.pods {
			now[toldPod(p)] = true
		}
		if g.unit != nil {
			now[toldGrew(g.unit)] = true
		}
	}
	r.told.Keep(key, func(what string) bool { return now[what] })
}

// count reports the group's pods per set.
func (r *Reconciler) count(g *group) []queueunit.PodSetPods {
	leader := queueunit.PodSetPods{Name: LeaderSet}
	workers := queueunit.PodSetPods{Name: WorkersSet}
	for _, p := range g.pods {
		ps := &workers
		if IsLeader(p) {
			ps = &leader
		}
		switch {
		case p.Status.Phase == corev1.PodRunning:
			ps.Running++
		case ended(p):
			ps.Finished++
		case !framework.Gated(p):
			ps.Pending++
		}
	}
	if len(g.unit.Spec.PodSet) < 2 {
		return []queueunit.PodSetPods{leader}
	}
	return []queueunit.PodSetPods{leader, workers}
}
