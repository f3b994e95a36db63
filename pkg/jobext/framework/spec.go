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
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/features"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
)

// Annotations the extension puts on units.
const (
	// JobPriorityAnnotation records the priority last taken from the job, so a
	// user's edit of spec.priority survives until the job's own priority
	// source changes.
	JobPriorityAnnotation = "koord-queue/job-priority"
	// JobActiveAnnotation records the job's scheduling.x-k8s.io/active value
	// last written into spec.active, so a user's edit of spec.active survives
	// until the job's own annotation changes.
	JobActiveAnnotation = "koord-queue/job-active"
	// JobMaxExecTimeAnnotation records the job's
	// scheduling.x-k8s.io/max-exec-time-seconds value last written into
	// spec.maximumExecutionTimeSeconds, for the same reason.
	JobMaxExecTimeAnnotation = "koord-queue/job-max-exec-time-seconds"
	// NoQuotaAnnotation marks a unit of a job that has no quota label and was
	// taken over by --manage-all-jobs.
	NoQuotaAnnotation = "koord-queue/no-quota"
	// NoQuotaMessage is the value of NoQuotaAnnotation.
	NoQuotaMessage = "job has no quota.scheduling.koordinator.sh/name label; add it to the job, or start koord-queue-controllers with --default-quota"
)

// annotationsNotCopied are job annotations that would only bloat the unit.
var annotationsNotCopied = map[string]bool{
	corev1.LastAppliedConfigAnnotation: true,
}

// PriorityClassReader reads PriorityClasses.
type PriorityClassReader interface {
	Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error
}

// Priority is a job's priority and where it came from.
type Priority struct {
	Value     *int32
	ClassName string
}

// JobPriority finds a job's priority: the scheduling.x-k8s.io/priority
// annotation wins, then the value of the PriorityClass named by the first pod
// template (or the kind's own PriorityClassSource), then the first template's
// spec.priority.
func JobPriority(ctx context.Context, reader PriorityClassReader, gj GenericJob, sets []PodSet) (Priority, error) {
	var p Priority
	if src, ok := gj.(PriorityClassSource); ok {
		p.ClassName = src.PriorityClassName()
	}
	var templatePriority *int32
	for i := range sets {
		spec := &sets[i].Template.Spec
		if p.ClassName == "" && spec.PriorityClassName != "" {
			p.ClassName = spec.PriorityClassName
		}
		if templatePriority == nil && spec.Priority != nil {
			templatePriority = ptr.To(*spec.Priority)
		}
	}
	if v, ok := gj.Object().GetAnnotations()[schedv1alpha1.PriorityAnnotation]; ok {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return p, &invalidJobError{err: fmt.Errorf("annotation %s=%q is not a 32-bit integer: %w", schedv1alpha1.PriorityAnnotation, v, err)}
		}
		p.Value = ptr.To(int32(n))
		return p, nil
	}
	if p.ClassName != "" {
		pc := &schedulingv1.PriorityClass{}
		err := reader.Get(ctx, client.ObjectKey{Name: p.ClassName}, pc)
		switch {
		case err == nil:
			p.Value = ptr.To(pc.Value)
			return p, nil
		case !apierrors.IsNotFound(err):
			return p, fmt.Errorf("get priority class %s: %w", p.ClassName, err)
		}
	}
	p.Value = templatePriority
	return p, nil
}

// CheckPodSetCount refuses more pod sets than a unit takes, naming the limit;
// the webhook denies such a job and the reconciler says so in an event.
func CheckPodSetCount(sets []PodSet) error {
	if len(sets) > schedv1alpha1.MaxPodSets {
		return fmt.Errorf("the job has %d pod sets, more than the %d a queue unit takes: koord-queue cannot queue it", len(sets), schedv1alpha1.MaxPodSets)
	}
	return nil
}

// DesiredSpec is the spec a job's unit should have, and the job priority it
// was computed with.
func DesiredSpec(ext *Extension, gj GenericJob, sets []PodSet, prio Priority, gates features.Gates) (schedv1alpha1.QueueUnitSpec, error) {
	obj := gj.Object()
	if err := CheckPodSetCount(sets); err != nil {
		return schedv1alpha1.QueueUnitSpec{}, err
	}
	spec := schedv1alpha1.QueueUnitSpec{
		ConsumerRef: &corev1.ObjectReference{
			APIVersion: ext.GVK.GroupVersion().String(),
			Kind:       ext.GVK.Kind,
			Name:       obj.GetName(),
			Namespace:  obj.GetNamespace(),
			UID:        obj.GetUID(),
		},
		Queue:             obj.GetLabels()[schedv1alpha1.QuotaNameLabel],
		Priority:          prio.Value,
		PriorityClassName: prio.ClassName,
	}
	for i := range sets {
		spec.PodSet = append(spec.PodSet, schedv1alpha1.PodSet{
			Name:     sets[i].Name,
			Count:    sets[i].Count,
			MinCount: sets[i].MinCount,
			Template: *sets[i].Template.DeepCopy(),
		})
	}
	total := TotalRequests(sets)
	spec.Resource = total
	spec.Request = total.DeepCopy()
	annotations := obj.GetAnnotations()
	if gates.QueueUnitActive {
		if v, ok := annotations[schedv1alpha1.ActiveAnnotation]; ok {
			active, err := strconv.ParseBool(v)
			if err != nil {
				return spec, fmt.Errorf("annotation %s=%q is not a bool: %w", schedv1alpha1.ActiveAnnotation, v, err)
			}
			spec.Active = ptr.To(active)
		}
	}
	if gates.MaximumExecutionTime {
		if v, ok := annotations[schedv1alpha1.MaxExecTimeSecondsAnnotation]; ok {
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil || n < 1 {
				return spec, fmt.Errorf("annotation %s=%q is not a positive 32-bit integer", schedv1alpha1.MaxExecTimeSecondsAnnotation, v)
			}
			spec.MaximumExecutionTimeSeconds = ptr.To(int32(n))
		}
	}
	return spec, nil
}

// formatPriority renders a job priority for JobPriorityAnnotation, and a
// maximum execution time for JobMaxExecTimeAnnotation.
func formatPriority(p *int32) string {
	if p == nil {
		return ""
	}
	return strconv.FormatInt(int64(*p), 10)
}

// formatActive renders a job's active value for JobActiveAnnotation.
func formatActive(a *bool) string {
	if a == nil {
		return ""
	}
	return strconv.FormatBool(*a)
}

// recordJobValues notes on the unit the values of spec it took from the job.
func recordJobValues(unit *schedv1alpha1.QueueUnit, spec *schedv1alpha1.QueueUnitSpec, prio Priority) {
	if unit.Annotations == nil {
		unit.Annotations = map[string]string{}
	}
	unit.Annotations[JobPriorityAnnotation] = formatPriority(prio.Value)
	unit.Annotations[JobActiveAnnotation] = formatActive(spec.Active)
	unit.Annotations[JobMaxExecTimeAnnotation] = formatPriority(spec.MaximumExecutionTimeSeconds)
}

// copyMeta copies the job's labels and annotations onto the unit, leaving the
// unit's own keys alone. The quota label is left as it is on a unit that
// holds quota: relabelling a running job does not move its charge; the new
// quota applies when the unit is queued again. It reports whether anything
// changed.
func copyMeta(job client.Object, unit *schedv1alpha1.QueueUnit) bool {
	changed := false
	labels := unit.GetLabels()
	keepQuota := !queueunit.IsWaiting(unit.Status.Phase)
	for k, v := range job.GetLabels() {
		if keepQuota && k == schedv1alpha1.QuotaNameLabel {
			continue
		}
		if cur, ok := labels[k]; !ok || cur != v {
			if labels == nil {
				labels = map[string]string{}
			}
			labels[k] = v
			changed = true
		}
	}
	unit.SetLabels(labels)
	annotations := unit.GetAnnotations()
	for k, v := range job.GetAnnotations() {
		if annotationsNotCopied[k] {
			continue
		}
		if cur, ok := annotations[k]; !ok || cur != v {
			if annotations == nil {
				annotations = map[string]string{}
			}
			annotations[k] = v
			changed = true
		}
	}
	unit.SetAnnotations(annotations)
	return changed
}
