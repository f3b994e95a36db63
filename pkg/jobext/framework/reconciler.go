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

package framework

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/features"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
)

// conflictRetry is how soon a reconcile that lost an optimistic-lock race
// tries again, from a fresh read.
const conflictRetry = 100 * time.Millisecond

// Event reasons on jobs.
const (
	EventQueueUnitCreated = "QueueUnitCreated"
	EventSuspended        = "Suspended"
	EventResumed          = "Resumed"
	EventInvalidJob       = "InvalidJob"
	EventRunningTimeout   = "RunningTimeout"
	// EventLeftAlone: --manage-all-jobs found the job already started.
	EventLeftAlone = "LeftAlone"
	// EventPodLabelsReplaced: a pod template label named another quota (or
	// unit) than the job's unit; the unit's won.
	EventPodLabelsReplaced = "PodLabelsReplaced"
	// EventPodsRefusedByQuota (job and unit): koord-scheduler refuses pods of
	// an admitted unit for quota; once per refusal.
	EventPodsRefusedByQuota = "PodsRefusedByQuota"
	// EventPodsEvictedElsewhere (job and unit): something other than
	// koord-queue evicted a pod of an admitted unit; once per pod.
	EventPodsEvictedElsewhere = "PodsEvictedElsewhere"
	// EventWaitingForDependency: an object the job's pods depend on (a
	// TrainJob's runtime) is missing; the job gets its unit once it exists.
	EventWaitingForDependency = "WaitingForDependency"
)

// ReconcilerOptions tune one extension's reconciler.
type ReconcilerOptions struct {
	// ManageAllJobs takes over every job of the kind, quota label or not, in
	// the namespaces ManagedNamespaces selects; it never suspends a job that
	// already started.
	ManageAllJobs bool
	// ManagedNamespaces selects the namespaces of ManageAllJobs; the zero
	// value selects all.
	ManagedNamespaces NamespaceSelector
	// DefaultQuota, when set, is the quota of units whose job has no quota
	// label.
	DefaultQuota string
	// Gates are the feature gates.
	Gates features.Gates
	// RunningTimeout moves a dequeued job whose pods never run to
	// TimeoutBackoff; zero turns it off.
	RunningTimeout time.Duration
	// BackoffTimeout is how long a timed-out unit waits before Enqueued.
	BackoffTimeout time.Duration
	// QuotaRefusalTimeout moves an admitted unit none of whose pods runs,
	// and whose pods koord-scheduler has refused for quota this long, to
	// TimeoutBackoff as RunningTimeout does; zero turns it off.
	QuotaRefusalTimeout time.Duration
	// SkipNameValidation lets tests start several managers in one process.
	SkipNameValidation bool
	// Workers is how many jobs are reconciled at once; less than 1 means 1.
	Workers int
}

// Reconciler keeps the jobs of one extension and their QueueUnits in step.
type Reconciler struct {
	client   client.Client
	ext      *Extension
	recorder events.EventRecorder
	clock    clock.PassiveClock
	opts     ReconcilerOptions

	leftAlone startedJobs
	evictions toldEvictions
	order     *creationOrder
	written   ownWrites
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// NewReconciler builds the reconciler of one extension.
func NewReconciler(c client.Client, ext *Extension, recorder events.EventRecorder, clk clock.PassiveClock, opts ReconcilerOptions) *Reconciler {
	return &Reconciler{client: c, ext: ext, recorder: recorder, clock: clk, opts: opts, order: newCreationOrder()}
}

// SetupWithManager watches the extension's jobs, the units that point at
// them, and the pods they control or whose label names their unit: a
// deleted unit waits for its job's pods, and an admitted unit tells what
// koord-scheduler and evictions do to its pods (podEvents). The manager's
// cache should keep pods slim (TrimPod). With ManageAllJobs it also caches
// Namespaces, whose labels the selector reads.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := r.indexPods(context.Background(), mgr.GetFieldIndexer()); err != nil { //nolint:forbidigo // set up before the manager starts: no caller context exists yet
		return fmt.Errorf("pod index: %w", err)
	}
	if r.opts.ManageAllJobs {
		// Registered before the manager starts, so the cache syncs it first.
		if _, err := mgr.GetCache().GetInformer(context.Background(), &corev1.Namespace{}); err != nil { //nolint:forbidigo // set up before the manager starts: no caller context exists yet
			return fmt.Errorf("namespace informer: %w", err)
		}
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named(r.ext.Name).
		Watches(r.ext.NewObject(), r.jobEvents()).
		Watches(&schedv1alpha1.QueueUnit{}, handler.EnqueueRequestsFromMapFunc(r.unitToJob)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.podToJob), builder.WithPredicates(podEvents()))
	for _, dep := range r.ext.Dependencies {
		b = b.Watches(dep.Object, handler.EnqueueRequestsFromMapFunc(r.dependencyToJobs(dep)))
	}
	return b.WithOptions(controller.Options{SkipNameValidation: ptr.To(r.opts.SkipNameValidation), MaxConcurrentReconciles: max(r.opts.Workers, 1)}).
		Complete(r)
}

// dependencyToJobs maps an object of dep's kind to the jobs that depend on it.
func (r *Reconciler) dependencyToJobs(dep Dependency) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		keys := dep.Jobs(ctx, r.client, obj)
		reqs := make([]reconcile.Request, 0, len(keys))
		for _, k := range keys {
			reqs = append(reqs, reconcile.Request{NamespacedName: k})
		}
		return reqs
	}
}

// unitToJob maps a unit to the job its consumerRef names, when the job is of
// this extension's kind and version.
func (r *Reconciler) unitToJob(_ context.Context, obj client.Object) []reconcile.Request {
	unit, ok := obj.(*schedv1alpha1.QueueUnit)
	if !ok || !r.refersToKind(unit) {
		return nil
	}
	ref := unit.Spec.ConsumerRef
	ns := ref.Namespace
	if ns == "" {
		ns = unit.Namespace
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: ref.Name}}}
}

func (r *Reconciler) refersToKind(unit *schedv1alpha1.QueueUnit) bool {
	ref := unit.Spec.ConsumerRef
	return ref != nil && ref.Kind == r.ext.GVK.Kind && ref.APIVersion == r.ext.GVK.GroupVersion().String()
}

// Reconcile reads the job and its unit, decides, and writes what changed.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	return r.reconcile(ctx, req.NamespacedName, false)
}

// reconcile is Reconcile for the job at key; onlyCreate stops once the job
// has its unit (the unit of an earlier job, made first: see creationOrder).
func (r *Reconciler) reconcile(ctx context.Context, key types.NamespacedName, onlyCreate bool) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	unitKey := types.NamespacedName{Namespace: key.Namespace, Name: UnitName(r.ext, key.Name)}
	obj := r.ext.NewObject()
	if err := r.client.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.order.done(key)
			if onlyCreate {
				return ctrl.Result{}, nil
			}
			r.leftAlone.forget(key)
			r.evictions.forget(unitKey)
			r.written.forget(key)
			return ctrl.Result{}, r.deleteUnit(ctx, unitKey, key.Name, "")
		}
		return ctrl.Result{}, fmt.Errorf("get job: %w", err)
	}
	if r.written.behind(obj) {
		// The watch brings our write, and with it the next reconcile.
		log.V(2).Info("Job cache has not seen this reconciler's last write of the job yet; deciding nothing", "resourceVersion", obj.GetResourceVersion())
		return ctrl.Result{}, nil
	}
	if obj.GetDeletionTimestamp() != nil {
		r.order.done(key)
		if onlyCreate {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, r.deleteUnit(ctx, unitKey, key.Name, obj.GetUID())
	}
	if r.ext.Claims != nil && !r.ext.Claims(obj) {
		r.order.done(key)
		log.V(3).Info("Job served by a sibling extension")
		return ctrl.Result{}, nil
	}
	gj, err := r.ext.Wrap(obj)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("wrap job: %w", err)
	}
	unit := &schedv1alpha1.QueueUnit{}
	if err := r.client.Get(ctx, unitKey, unit); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("get queue unit: %w", err)
		}
		if !onlyCreate {
			r.unitsBefore(ctx, key)
		}
		res, err := r.takeOver(ctx, gj, unitKey)
		if err == nil {
			r.order.done(key)
		}
		return res, err
	}
	r.order.done(key)
	if onlyCreate {
		return ctrl.Result{}, nil
	}
	if unit.DeletionTimestamp != nil {
		// Deleted by hand while its job is here: it goes once the job's pods are.
		if unit.Spec.ConsumerRef == nil {
			return ctrl.Result{}, nil
		}
		return r.retry(r.releaseWhenPodsGone(ctx, unit, unit.Spec.ConsumerRef.UID), "release queue unit")
	}
	if unit.Spec.ConsumerRef == nil || unit.Spec.ConsumerRef.UID != obj.GetUID() {
		if r.refersToKind(unit) && unit.Spec.ConsumerRef.Name == obj.GetName() {
			// A unit left over from an earlier job of the same name.
			log.V(2).Info("Deleting stale queue unit", "queueUnit", klog.KObj(unit))
			return ctrl.Result{RequeueAfter: conflictRetry}, r.deleteUnit(ctx, unitKey, key.Name, unit.Spec.ConsumerRef.UID)
		}
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventInvalidJob, "Queue", "queue unit %s belongs to another object", unitKey.Name)
		return ctrl.Result{}, nil
	}
	return r.sync(ctx, gj, unit)
}

// deleteUnit removes the unit of a job that is gone or going. uid, when set,
// must match the unit's consumer.
func (r *Reconciler) deleteUnit(ctx context.Context, key types.NamespacedName, jobName string, uid types.UID) error {
	unit := &schedv1alpha1.QueueUnit{}
	if err := r.client.Get(ctx, key, unit); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !r.refersToKind(unit) || unit.Spec.ConsumerRef.Name != jobName || (uid != "" && unit.Spec.ConsumerRef.UID != uid) {
		return nil
	}
	if unit.DeletionTimestamp != nil {
		return r.releaseWhenPodsGone(ctx, unit, unit.Spec.ConsumerRef.UID)
	}
	err := r.client.Delete(ctx, unit, client.Preconditions{UID: ptr.To(unit.UID)})
	if err := client.IgnoreNotFound(err); err != nil {
		return fmt.Errorf("delete queue unit: %w", err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Deleted queue unit of a deleted job", "queueUnit", klog.KObj(unit))
	return nil
}

// takeOver creates the unit of a job the extension should manage, suspending
// the job first when it is not suspended. A job that asked for the queue (a
// quota label, or a kind's own opt-in) is managed whatever its state, so one
// that started before its unit existed (created before the install, or while
// the webhook was down) is held now: the backstop. --manage-all-jobs leaves a
// job that already started alone.
func (r *Reconciler) takeOver(ctx context.Context, gj GenericJob, key types.NamespacedName) (ctrl.Result, error) {
	obj := gj.Object()
	hasQuota := obj.GetLabels()[schedv1alpha1.QuotaNameLabel] != ""
	switch {
	case gj.Status().Finished:
		return ctrl.Result{}, nil
	case AskedForQueue(gj):
	case r.opts.ManageAllJobs && !neverManaged(gj):
		if ok, err := r.takesOverAll(ctx, gj); !ok || err != nil {
			return ctrl.Result{}, err
		}
	default:
		return ctrl.Result{}, nil
	}
	sets, err := r.podSets(ctx, gj)
	var prio Priority
	if err == nil {
		prio, err = JobPriority(ctx, r.client, gj, sets)
	}
	var missing *MissingError
	if errors.As(err, &missing) {
		// No unit yet: the missing object's watch brings the job back.
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventWaitingForDependency, "Queue", "cannot queue job yet: %v; it is queued once that exists", err)
		return ctrl.Result{}, nil
	}
	var invalid *invalidJobError
	if errors.As(err, &invalid) {
		// Retrying cannot help: say it once, and wait for the job to change.
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventInvalidJob, "Queue", "cannot queue job: %v", err)
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	spec, err := DesiredSpec(r.ext, gj, sets, prio, r.opts.Gates)
	if err != nil {
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventInvalidJob, "Queue", "cannot queue job: %v", err)
		return ctrl.Result{}, nil
	}
	if !gj.IsSuspended() {
		if err := r.writeJob(ctx, gj, gj.Suspend); err != nil {
			return r.retry(err, "suspend job")
		}
		r.recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventSuspended, "Suspend", "suspended to wait in the queue")
	}
	unit := r.newUnit(gj, key, spec, prio, hasQuota)
	if err := r.client.Create(ctx, unit); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, fmt.Errorf("create queue unit: %w", err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Created queue unit", "queueUnit", klog.KObj(unit))
	r.recorder.Eventf(obj, unit, corev1.EventTypeNormal, EventQueueUnitCreated, "Queue", "created queue unit %s", unit.Name)
	return ctrl.Result{}, nil
}

func (r *Reconciler) newUnit(gj GenericJob, key types.NamespacedName, spec schedv1alpha1.QueueUnitSpec, prio Priority, hasQuota bool) *schedv1alpha1.QueueUnit {
	obj := gj.Object()
	unit := &schedv1alpha1.QueueUnit{
		ObjectMeta: metav1.ObjectMeta{
			Name:      key.Name,
			Namespace: key.Namespace,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         r.ext.GVK.GroupVersion().String(),
				Kind:               r.ext.GVK.Kind,
				Name:               obj.GetName(),
				UID:                obj.GetUID(),
				Controller:         ptr.To(true),
				BlockOwnerDeletion: ptr.To(true),
			}},
			Finalizers: []string{PodsGoneFinalizer},
		},
		Spec: spec,
	}
	copyMeta(obj, unit)
	recordJobValues(unit, &spec, prio)
	unit.Annotations[schedv1alpha1.JobCreatedAtAnnotation] = queueunit.FormatCreated(queueunit.JobCreated(obj.GetCreationTimestamp(), obj.GetAnnotations()))
	if !hasQuota {
		unit.Annotations[NoQuotaAnnotation] = NoQuotaMessage
	}
	r.defaultQuota(obj, unit)
	return unit
}

// writeJob applies change to the job and patches it under optimistic lock.
func (r *Reconciler) writeJob(ctx context.Context, gj GenericJob, change func()) error {
	obj := gj.Object()
	before, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("job %T does not copy to a client.Object", obj)
	}
	change()
	if err := r.client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("patch job: %w", err)
	}
	r.written.record(obj)
	return nil
}

// retry turns a lost optimistic-lock race into a quick requeue from a fresh
// read, and wraps every other error; no error is no retry.
func (r *Reconciler) retry(err error, what string) (ctrl.Result, error) {
	if err == nil {
		return ctrl.Result{}, nil
	}
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return ctrl.Result{}, fmt.Errorf("%s: %w", what, err)
}
