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
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/util/mutation"
)

// sync keeps a managed job and its unit in step: spec first, then the job's
// suspension, then one status write.
func (r *Reconciler) sync(ctx context.Context, gj GenericJob, unit *schedv1alpha1.QueueUnit) (ctrl.Result, error) {
	if err := r.syncSpec(ctx, gj, unit); err != nil {
		return r.retry(err, "update queue unit spec")
	}
	status := gj.Status()
	desired := unit.DeepCopy()
	var result ctrl.Result
	var err error
	var pods []corev1.Pod
	phase := unit.Status.Phase
	switch {
	case queueunit.IsFinished(phase):
		// The end is final.
	case status.Finished:
		r.markFinished(desired, status)
	case queueunit.IsEvicting(unit):
		err = r.evict(ctx, gj, desired, status)
	case queueunit.InRunningTimeoutBackoff(unit):
		result, err = r.backOff(ctx, gj, desired, status)
	case phase == schedv1alpha1.QueueUnitPhaseDequeued || phase == schedv1alpha1.QueueUnitPhaseRunning:
		if pods, err = r.unitPods(ctx, unit); err != nil {
			return ctrl.Result{}, err
		}
		result, err = r.runAdmitted(ctx, gj, unit, desired, status, pods)
	default:
		// Enqueued, Reserved, new, or a scheduler's TimeoutBackoff: the job waits.
		err = r.hold(ctx, gj)
	}
	if err != nil {
		return r.retry(err, "update job")
	}
	if err := r.writeStatus(ctx, unit, desired); err != nil {
		return r.retry(err, "update queue unit status")
	}
	r.tellPods(gj, unit, desired, pods)
	return result, nil
}

// syncSpec brings the unit's metadata, and while it waits its spec, in step
// with the job. A user's edit of spec.priority, spec.active or
// spec.maximumExecutionTimeSeconds stays until the job's own value changes
// (the last one taken is recorded in an annotation on the unit).
func (r *Reconciler) syncSpec(ctx context.Context, gj GenericJob, unit *schedv1alpha1.QueueUnit) error {
	sets, err := r.podSets(ctx, gj)
	var prio Priority
	if err == nil {
		prio, err = JobPriority(ctx, r.client, gj, sets)
	}
	var invalid *invalidJobError
	var missing *MissingError
	if errors.As(err, &invalid) || errors.As(err, &missing) {
		return nil // the job turned invalid, or its runtime went: keep the unit as it was
	}
	if err != nil {
		return err
	}
	spec, err := DesiredSpec(r.ext, gj, sets, prio, r.opts.Gates)
	if err != nil {
		return nil
	}
	desired := unit.DeepCopy()
	ensureFinalizer(desired)
	copyMeta(gj.Object(), desired)
	setAnnotation(desired, schedv1alpha1.JobCreatedAtAnnotation, queueunit.FormatCreated(queueunit.JobCreated(gj.Object().GetCreationTimestamp(), gj.Object().GetAnnotations())))
	if v := formatActive(spec.Active); desired.Annotations[JobActiveAnnotation] != v {
		desired.Spec.Active = spec.Active
		setAnnotation(desired, JobActiveAnnotation, v)
	}
	if v := formatPriority(spec.MaximumExecutionTimeSeconds); desired.Annotations[JobMaxExecTimeAnnotation] != v {
		desired.Spec.MaximumExecutionTimeSeconds = spec.MaximumExecutionTimeSeconds
		setAnnotation(desired, JobMaxExecTimeAnnotation, v)
	}
	if queueunit.IsWaiting(unit.Status.Phase) {
		desired.Spec.ConsumerRef = spec.ConsumerRef
		desired.Spec.Queue = spec.Queue
		if spec.Queue == "" {
			// A job without a quota label keeps the unit's quota: --default-quota.
			r.defaultQuota(gj.Object(), desired)
			desired.Spec.Queue = desired.Labels[schedv1alpha1.QuotaNameLabel]
		}
		desired.Spec.PodSet = spec.PodSet
		desired.Spec.Resource = spec.Resource
		desired.Spec.Request = spec.Request
		desired.Spec.PriorityClassName = spec.PriorityClassName
		if jp := formatPriority(prio.Value); desired.Annotations[JobPriorityAnnotation] != jp {
			desired.Spec.Priority = prio.Value
			setAnnotation(desired, JobPriorityAnnotation, jp)
		}
	}
	if equality.Semantic.DeepEqual(unit.ObjectMeta, desired.ObjectMeta) && equality.Semantic.DeepEqual(unit.Spec, desired.Spec) {
		return nil
	}
	if err := r.client.Patch(ctx, desired, client.MergeFromWithOptions(unit, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Updated queue unit spec", "queueUnit", klog.KObj(unit))
	desired.DeepCopyInto(unit)
	return nil
}

func setAnnotation(unit *schedv1alpha1.QueueUnit, key, value string) {
	if unit.Annotations == nil {
		unit.Annotations = map[string]string{}
	}
	unit.Annotations[key] = value
}

// hold keeps a job that is not admitted suspended.
func (r *Reconciler) hold(ctx context.Context, gj GenericJob) error {
	if gj.IsSuspended() {
		return nil
	}
	if err := r.writeJob(ctx, gj, gj.Suspend); err != nil {
		return err
	}
	r.recorder.Eventf(gj.Object(), nil, corev1.EventTypeNormal, EventSuspended, "Suspend", "suspended: its queue unit is not admitted")
	return nil
}

// run resumes an admitted job and reports its pods (pods: those its unit's
// label names). With a running timeout it sends a unit whose pods never ran
// to TimeoutBackoff, and with a quota refusal timeout one whose pods
// koord-scheduler refuses for quota while none runs.
func (r *Reconciler) run(ctx context.Context, gj GenericJob, desired *schedv1alpha1.QueueUnit, status JobStatus, pods []corev1.Pod) (ctrl.Result, error) {
	var result ctrl.Result
	if r.opts.RunningTimeout > 0 && desired.Status.Phase == schedv1alpha1.QueueUnitPhaseDequeued && status.Running() == 0 {
		left := r.opts.RunningTimeout - r.clock.Since(queueunit.DequeuedAt(desired).Time)
		if left <= 0 {
			return r.timeOut(ctx, gj, desired, fmt.Sprintf("pods did not run within the running timeout %s", r.opts.RunningTimeout))
		}
		result.RequeueAfter = left
	}
	left, over := r.quotaRefusal(desired, status, pods)
	if over != "" {
		return r.timeOut(ctx, gj, desired, over)
	}
	if left > 0 && (result.RequeueAfter == 0 || left < result.RequeueAfter) {
		result.RequeueAfter = left
	}
	if err := r.resume(ctx, gj, desired); err != nil {
		return ctrl.Result{}, err
	}
	reportPods(desired, status, r.now())
	return result, nil
}

// resume lets an admitted job start, its pod templates labelled with the
// unit's quota and name in the same write (a batch Job's template changes
// only while suspended), or for a LabelsApart kind in a write of their own
// just before. A template label naming another quota is overwritten, and
// the job and unit say so.
func (r *Reconciler) resume(ctx context.Context, gj GenericJob, unit *schedv1alpha1.QueueUnit) error {
	if !gj.IsSuspended() {
		return nil
	}
	labels := PodLabels(unit.Spec.Queue, unit.Name)
	var replaced []ReplacedLabel
	if _, apart := gj.(LabelsApart); apart {
		if err := r.writeJob(ctx, gj, func() { replaced = gj.SetPodLabels(labels) }); err != nil {
			return err
		}
		if err := r.writeJob(ctx, gj, gj.Resume); err != nil {
			return err
		}
	} else if err := r.writeJob(ctx, gj, func() {
		replaced = gj.SetPodLabels(labels)
		gj.Resume()
	}); err != nil {
		return err
	}
	if len(replaced) > 0 {
		r.recorder.Eventf(gj.Object(), unit, corev1.EventTypeWarning, EventPodLabelsReplaced, "Resume",
			"pod template labels set to the queue unit's: %s", DescribeReplaced(replaced, labels))
	}
	r.recorder.Eventf(gj.Object(), nil, corev1.EventTypeNormal, EventResumed, "Resume", "resumed: its queue unit is dequeued")
	return nil
}

// timeOut suspends a job whose pods did not run in time (the running
// timeout, or the quota refusal timeout: msg says which) and moves its unit
// to TimeoutBackoff, releasing its admission.
func (r *Reconciler) timeOut(ctx context.Context, gj GenericJob, desired *schedv1alpha1.QueueUnit, msg string) (ctrl.Result, error) {
	if !gj.IsSuspended() {
		if err := r.writeJob(ctx, gj, gj.Suspend); err != nil {
			return ctrl.Result{}, err
		}
	}
	queueunit.MarkRunningTimeout(desired, msg, r.now())
	r.recorder.Eventf(gj.Object(), desired, corev1.EventTypeWarning, EventRunningTimeout, "Suspend", "%s", msg)
	return ctrl.Result{RequeueAfter: r.opts.BackoffTimeout}, nil
}

// backOff returns a timed-out unit to Enqueued once the backoff has passed
// and the job holds no pods.
func (r *Reconciler) backOff(ctx context.Context, gj GenericJob, desired *schedv1alpha1.QueueUnit, status JobStatus) (ctrl.Result, error) {
	if err := r.hold(ctx, gj); err != nil {
		return ctrl.Result{}, err
	}
	left := r.opts.BackoffTimeout - r.clock.Since(queueunit.BackoffStarted(desired).Time)
	if left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	if gone, err := r.podsGone(ctx, desired, status); !gone || err != nil {
		return ctrl.Result{}, err // the job's status change, or a pod's deletion, brings us back
	}
	queueunit.Requeue(desired, queueunit.ReasonRequeued, "backoff after running timeout is over", r.now())
	return ctrl.Result{}, nil
}

// evict suspends an evicted job and, once it holds no pods, hands its unit
// back to the queue.
func (r *Reconciler) evict(ctx context.Context, gj GenericJob, desired *schedv1alpha1.QueueUnit, status JobStatus) error {
	if mutation.On(mutation.EvictionKeepsPods) {
		queueunit.Requeue(desired, queueunit.ReasonRequeued, "evicted job is suspended and holds no pods", r.now())
		return nil
	}
	if err := r.hold(ctx, gj); err != nil {
		return err
	}
	if gone, err := r.podsGone(ctx, desired, status); !gone || err != nil {
		return err
	}
	queueunit.Requeue(desired, queueunit.ReasonRequeued, "evicted job is suspended and holds no pods", r.now())
	return nil
}

// podsGone reports whether a job held back from its admission (evicted,
// timed out, grown) holds no pods any more: its status counts none, and no
// pod labelled with its unit is alive in the cache. The second look covers
// the moment a job's controller has made a pod and not yet counted it.
// A pod's deletion brings the job back to reconcile.
func (r *Reconciler) podsGone(ctx context.Context, unit *schedv1alpha1.QueueUnit, status JobStatus) (bool, error) {
	if status.Active() > 0 {
		return false, nil
	}
	pods, err := r.unitPods(ctx, unit)
	if err != nil {
		return false, err
	}
	for i := range pods {
		if p := pods[i].Status.Phase; p != corev1.PodSucceeded && p != corev1.PodFailed {
			return false, nil
		}
	}
	return true, nil
}

func (r *Reconciler) markFinished(desired *schedv1alpha1.QueueUnit, status JobStatus) {
	now := r.now()
	queueunit.MarkFinished(desired, status.Failed, status.Message, now)
	reportPods(desired, status, now)
}

// writeStatus patches the unit's status under optimistic lock, only when it
// changed.
func (r *Reconciler) writeStatus(ctx context.Context, unit, desired *schedv1alpha1.QueueUnit) error {
	if equality.Semantic.DeepEqual(unit.Status, desired.Status) {
		return nil
	}
	if err := r.client.Status().Patch(ctx, desired, client.MergeFromWithOptions(unit, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Updated queue unit status", "queueUnit", klog.KObj(unit), "phase", desired.Status.Phase)
	return nil
}

func (r *Reconciler) now() metav1.Time {
	return metav1.NewTime(r.clock.Now().Truncate(time.Second))
}
