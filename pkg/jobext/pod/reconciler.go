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

package pod

import (
	"context"
	"errors"
	"fmt"
	"slices"
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

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
)

// Event reasons on pods, besides the framework's.
const (
	// EventWaitingForGroup: a group's unit waits until every member is here.
	EventWaitingForGroup = "WaitingForGroup"
	// EventEvicted: the pod was deleted because its unit was evicted.
	EventEvicted = "Evicted"
)

// memberIndex indexes queued pods by the unit they belong to.
const memberIndex = "koord-queue.podUnit"

// Reconciler keeps queued pods and their units in step. The key of a
// reconcile is the unit's.
type Reconciler struct {
	client   client.Client
	ext      *framework.Extension
	recorder events.EventRecorder
	clock    clock.PassiveClock
	opts     framework.ReconcilerOptions

	// told holds, by the unit name a pod maps to, the UIDs of pods already
	// told they run outside the queue; an entry goes with its pod.
	told framework.Told
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// NewReconciler builds the pods' reconciler.
func NewReconciler(c client.Client, ext *framework.Extension, recorder events.EventRecorder, clk clock.PassiveClock, opts framework.ReconcilerOptions) *Reconciler {
	return &Reconciler{client: c, ext: ext, recorder: recorder, clock: clk, opts: opts}
}

// SetupWithManager watches pods (the cache keeps queued ones whole:
// framework.TrimPod) and units whose consumer is a pod.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, memberIndex, memberOf); err != nil { //nolint:forbidigo // set up before the manager starts: no caller context exists yet
		return fmt.Errorf("pod index: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(r.ext.Name).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(podToUnit)).
		Watches(&schedv1alpha1.QueueUnit{}, handler.EnqueueRequestsFromMapFunc(unitToSelf)).
		WithOptions(controller.Options{SkipNameValidation: ptr.To(r.opts.SkipNameValidation), MaxConcurrentReconciles: max(r.opts.Workers, 1)}).
		Complete(r)
}

func memberOf(obj client.Object) []string {
	p, ok := obj.(*corev1.Pod)
	if !ok || !Opted(p) {
		return nil
	}
	if name := UnitNameOf(p); name != "" {
		return []string{name}
	}
	return nil
}

func podToUnit(_ context.Context, obj client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	for _, name := range memberOf(obj) {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}})
	}
	return reqs
}

func unitToSelf(_ context.Context, obj client.Object) []reconcile.Request {
	unit, ok := obj.(*schedv1alpha1.QueueUnit)
	if !ok || !ofPods(unit) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(unit)}}
}

// ofPods reports a unit whose consumer is a pod.
func ofPods(unit *schedv1alpha1.QueueUnit) bool {
	ref := unit.Spec.ConsumerRef
	return ref != nil && ref.Kind == "Pod" && ref.APIVersion == "v1"
}

// Reconcile reads a unit's pods and the unit, decides, and writes.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	list := &corev1.PodList{}
	if err := r.client.List(ctx, list, client.InNamespace(req.Namespace), client.MatchingFields{memberIndex: req.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("list pods of queue unit: %w", err)
	}
	var members []*corev1.Pod
	for i := range list.Items {
		members = append(members, &list.Items[i])
	}
	r.forget(req.NamespacedName, members)
	unit := &schedv1alpha1.QueueUnit{}
	if err := r.client.Get(ctx, req.NamespacedName, unit); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("get queue unit: %w", err)
		}
		unit = nil
	}
	if unit != nil && !ofPods(unit) {
		return ctrl.Result{}, nil // another kind's unit of the same name
	}
	if len(members) == 0 {
		return ctrl.Result{}, r.deleteUnit(ctx, unit)
	}
	if unit == nil || unit.DeletionTimestamp != nil {
		return ctrl.Result{}, r.create(ctx, req.NamespacedName, members)
	}
	return r.sync(ctx, unit, members)
}

func (r *Reconciler) deleteUnit(ctx context.Context, unit *schedv1alpha1.QueueUnit) error {
	if unit == nil || unit.DeletionTimestamp != nil {
		return nil
	}
	if err := client.IgnoreNotFound(r.client.Delete(ctx, unit, client.Preconditions{UID: ptr.To(unit.UID)})); err != nil {
		return fmt.Errorf("delete queue unit: %w", err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Deleted queue unit: its pods are gone", "queueUnit", klog.KObj(unit))
	return nil
}

// waiting splits members into those the queue holds and those it cannot:
// a pod that came without the gate (created while the webhook was away)
// runs outside the queue, and is told so once.
func (r *Reconciler) waiting(key types.NamespacedName, members []*corev1.Pod) []*corev1.Pod {
	var held []*corev1.Pod
	for _, p := range members {
		switch {
		case p.DeletionTimestamp != nil:
		case Gated(p):
			held = append(held, p)
		case p.Labels[schedv1alpha1.QueueUnitLabel] == "":
			// Never gated and never labelled by the webhook or by us.
			r.leftAlone(key, p)
		}
	}
	return held
}

func (r *Reconciler) leftAlone(key types.NamespacedName, p *corev1.Pod) {
	if !r.told.Once(key, string(p.UID)) {
		return
	}
	r.recorder.Eventf(p, nil, corev1.EventTypeWarning, framework.EventLeftAlone, "Queue",
		"pod was created without the scheduling gate %s (the webhook was not called): it runs outside the queue; koord-queue counts its requests against its quota as usage it does not manage, and never evicts it", SchedulingGate)
}

// forget drops what was told to pods of key that are gone (members are the
// pods of key now), so the memory of told pods does not outgrow the pods.
func (r *Reconciler) forget(key types.NamespacedName, members []*corev1.Pod) {
	r.told.Keep(key, func(uid string) bool {
		return slices.ContainsFunc(members, func(p *corev1.Pod) bool { return string(p.UID) == uid })
	})
}

// toldCount is how many pods are remembered as told (for tests).
func (r *Reconciler) toldCount() int { return r.told.Len() }

// create makes the unit of held pods once they are all here.
func (r *Reconciler) create(ctx context.Context, key types.NamespacedName, members []*corev1.Pod) error {
	held := r.waiting(key, members)
	if len(held) == 0 {
		return nil
	}
	g, err := newGroup(held)
	if err != nil {
		for _, p := range held {
			r.recorder.Eventf(p, nil, corev1.EventTypeWarning, framework.EventInvalidJob, "Queue", "cannot queue pod: %v", err)
		}
		return nil
	}
	last := g.members[len(g.members)-1]
	if !g.complete() {
		r.recorder.Eventf(last, nil, corev1.EventTypeNormal, EventWaitingForGroup, "Queue",
			"group %s waits for its pods: %d of %d pods", g.name, len(g.members), g.want)
		return nil
	}
	first := Wrap(g.members[0])
	prio, err := framework.JobPriority(ctx, r.client, first, g.sets)
	if err != nil && isAPIError(err) {
		return err // reading the priority class failed: retried
	}
	var spec schedv1alpha1.QueueUnitSpec
	if err == nil {
		spec, err = framework.DesiredSpec(r.ext, first, g.sets, prio, r.opts.Gates)
	}
	if err != nil {
		// Bad annotations: retrying cannot help; the pods keep their gate.
		for _, p := range g.members {
			r.recorder.Eventf(p, nil, corev1.EventTypeWarning, framework.EventInvalidJob, "Queue", "cannot queue pod: %v", err)
		}
		return nil
	}
	return r.createUnit(ctx, key, g, spec)
}

func isAPIError(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status)
}

func (r *Reconciler) createUnit(ctx context.Context, key types.NamespacedName, g *group, spec schedv1alpha1.QueueUnitSpec) error {
	first := g.members[0]
	unit := &schedv1alpha1.QueueUnit{
		ObjectMeta: metav1.ObjectMeta{
			Name: key.Name, Namespace: key.Namespace,
			Labels:      map[string]string{schedv1alpha1.QuotaNameLabel: first.Labels[schedv1alpha1.QuotaNameLabel]},
			Annotations: map[string]string{},
		},
		Spec: spec,
	}
	if g.name != "" {
		unit.Labels[GroupLabel] = g.name
	}
	created := first.CreationTimestamp
	createdAt := first.Annotations
	for _, p := range g.members {
		// A single pod's unit is its pod's to own; a group's is owned by
		// every member, so it goes with the last.
		unit.OwnerReferences = append(unit.OwnerReferences, metav1.OwnerReference{
			APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID, Controller: ptr.To(g.name == ""),
		})
		if p.CreationTimestamp.Before(&created) {
			created, createdAt = p.CreationTimestamp, p.Annotations
		}
	}
	unit.Annotations[schedv1alpha1.JobCreatedAtAnnotation] = queueunit.FormatCreated(queueunit.JobCreated(created, createdAt))
	if err := r.client.Create(ctx, unit); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil // the deleted unit is still going; its deletion brings us back
		}
		return fmt.Errorf("create queue unit: %w", err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Created queue unit", "queueUnit", klog.KObj(unit), "pods", len(g.members))
	for _, p := range g.members {
		r.recorder.Eventf(p, unit, corev1.EventTypeNormal, framework.EventQueueUnitCreated, "Queue", "created queue unit %s", unit.Name)
	}
	return nil
}

// sync acts on the unit's phase: admitted, the gates go; evicted, the pods
// are deleted (a created pod cannot be held again); all ended, the unit is
// finished.
func (r *Reconciler) sync(ctx context.Context, unit *schedv1alpha1.QueueUnit, members []*corev1.Pod) (ctrl.Result, error) {
	g, err := newGroup(members)
	if err != nil {
		r.recorder.Eventf(unit, nil, corev1.EventTypeWarning, framework.EventInvalidJob, "Queue", "%v", err)
		for _, p := range members {
			r.recorder.Eventf(p, nil, corev1.EventTypeWarning, framework.EventInvalidJob, "Queue", "%v", err)
		}
		return ctrl.Result{}, nil
	}
	status := g.status()
	desired := unit.DeepCopy()
	now := metav1.NewTime(r.clock.Now().Truncate(time.Second))
	phase := unit.Status.Phase
	switch {
	case queueunit.IsFinished(phase):
	case status.Finished:
		queueunit.MarkFinished(desired, status.Failed, status.Message, now)
	case queueunit.IsEvicting(unit):
		err = r.evict(ctx, unit, g)
	case phase == schedv1alpha1.QueueUnitPhaseDequeued || phase == schedv1alpha1.QueueUnitPhaseRunning:
		err = r.admit(ctx, unit, g)
	}
	if err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
		}
		return ctrl.Result{}, err
	}
	if !queueunit.IsWaiting(phase) && !queueunit.IsFinished(phase) {
		pods := make([]queueunit.PodSetPods, 0, len(status.PodSets))
		for _, ps := range status.PodSets {
			pods = append(pods, queueunit.PodSetPods{Name: ps.Name, Running: ps.Running, Pending: ps.Pending, Finished: ps.Finished})
		}
		if !status.Finished {
			queueunit.ReportPods(desired, pods, now)
		}
	}
	if equality.Semantic.DeepEqual(unit.Status, desired.Status) {
		return ctrl.Result{}, nil
	}
	if err := r.client.Status().Patch(ctx, desired, client.MergeFromWithOptions(unit, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
		}
		return ctrl.Result{}, fmt.Errorf("update queue unit status: %w", err)
	}
	return ctrl.Result{}, nil
}

// admit removes the gate from every held member, labelling it with its unit
// and quota, once every pod of the group is here (a group admitted before a
// member was deleted and made again lets the new member go too).
func (r *Reconciler) admit(ctx context.Context, unit *schedv1alpha1.QueueUnit, g *group) error {
	started := false
	for _, p := range g.members {
		if !Gated(p) {
			started = true
		}
	}
	if !g.complete() && !started {
		return nil
	}
	labels := framework.PodLabels(unit.Spec.Queue, unit.Name)
	for _, p := range g.members {
		if !Gated(p) || p.DeletionTimestamp != nil {
			continue
		}
		after := p.DeepCopy()
		Ungate(after)
		framework.SetLabels(&after.Labels, labels, "metadata")
		if err := r.client.Patch(ctx, after, client.MergeFromWithOptions(p, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("remove scheduling gate of pod %s: %w", p.Name, err)
		}
		r.recorder.Eventf(p, nil, corev1.EventTypeNormal, framework.EventResumed, "Resume", "scheduling gate removed: queue unit %s is admitted", unit.Name)
	}
	return nil
}

// evict deletes the unit's pods that still run or wait: a bare pod has no
// suspension. Their unit goes with them.
func (r *Reconciler) evict(ctx context.Context, unit *schedv1alpha1.QueueUnit, g *group) error {
	for _, p := range g.members {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if err := client.IgnoreNotFound(r.client.Delete(ctx, p, client.Preconditions{UID: ptr.To(p.UID)})); err != nil {
			return fmt.Errorf("delete evicted pod %s: %w", p.Name, err)
		}
		r.recorder.Eventf(p, unit, corev1.EventTypeWarning, EventEvicted, "Evict", "deleted: queue unit %s was evicted, and a pod cannot be suspended", unit.Name)
	}
	return nil
}
