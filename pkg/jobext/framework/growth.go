package framework

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
)

// EventJobGrew: a running job asks for more than its unit was admitted with.
const EventJobGrew = "JobGrew"

// reasonJobGrew is the condition reason of a unit handed back because its job grew.
const reasonJobGrew = "JobGrew"

// admittedSets is what the unit was admitted with, per pod set: its
// status.admissions, else (none recorded) its spec, which the scheduler then
// charges.
func admittedSets(unit *schedv1alpha1.QueueUnit) []schedv1alpha1.Admission {
	if len(unit.Status.Admissions) > 0 {
		return unit.Status.Admissions
	}
	out := make([]schedv1alpha1.Admission, 0, len(unit.Spec.PodSet))
	for i := range unit.Spec.PodSet {
		ps := &unit.Spec.PodSet[i]
		out = append(out, schedv1alpha1.Admission{Name: ps.Name, Replicas: ps.Count, Resources: PodRequests(&ps.Template.Spec)})
	}
	return out
}

// Exceeds says how the job's pod sets ask for more than was admitted (more
// pods in a set, or bigger pods), or "" when they fit the admission. Sets
// are matched by name; when a set has no admission of its name (a unit
// admitted as one "default" replica), the job's whole demand is compared with
// the whole admission.
func Exceeds(sets []PodSet, admitted []schedv1alpha1.Admission) string {
	byName := make(map[string]schedv1alpha1.Admission, len(admitted))
	for _, a := range admitted {
		byName[a.Name] = a
	}
	for i := range sets {
		ps := &sets[i]
		if ps.Count == 0 {
			continue
		}
		a, ok := byName[ps.Name]
		if !ok {
			return exceedsTotal(sets, admitted)
		}
		if ps.Count > a.Replicas {
			return fmt.Sprintf("pod set %s grew from %d to %d pods", ps.Name, a.Replicas, ps.Count)
		}
		if name, want, got, ok := larger(PodRequests(&ps.Template.Spec), a.Resources); ok {
			return fmt.Sprintf("pods of set %s grew: %s %s, admitted with %s", ps.Name, name, want.String(), got.String())
		}
	}
	return ""
}

func exceedsTotal(sets []PodSet, admitted []schedv1alpha1.Admission) string {
	total := corev1.ResourceList{}
	for _, a := range admitted {
		addTo(total, resources.Scale(a.Resources, int64(a.Replicas)))
	}
	if name, want, got, ok := larger(TotalRequests(sets), total); ok {
		return fmt.Sprintf("job grew: it asks %s %s in all, admitted with %s", name, want.String(), got.String())
	}
	return ""
}

// larger finds a resource of want above what have holds (missing counts as
// zero).
func larger(want, have corev1.ResourceList) (corev1.ResourceName, resource.Quantity, resource.Quantity, bool) {
	for name, q := range want {
		h := have[name]
		if q.Cmp(h) > 0 {
			return name, q, h, true
		}
	}
	return "", resource.Quantity{}, resource.Quantity{}, false
}

// grewBeyondAdmission says how a running job exceeds its unit's admission,
// or "". A job that turned invalid (its demand cannot be counted any more)
// exceeds it too.
func (r *Reconciler) grewBeyondAdmission(ctx context.Context, gj GenericJob, unit *schedv1alpha1.QueueUnit) (string, error) {
	sets, err := r.podSets(ctx, gj)
	var invalid *invalidJobError
	if errors.As(err, &invalid) {
		return err.Error(), nil
	}
	if err != nil {
		return "", err
	}
	return Exceeds(sets, admittedSets(unit)), nil
}

// holdAtAdmission suspends a job that grew beyond its admission and, once it
// holds no pods, hands its unit back to the queue, where its spec takes the
// new size and it waits to be admitted at it.
func (r *Reconciler) holdAtAdmission(ctx context.Context, gj GenericJob, desired *schedv1alpha1.QueueUnit, status JobStatus, why string) error {
	if !gj.IsSuspended() {
		if err := r.writeJob(ctx, gj, gj.Suspend); err != nil {
			return err
		}
		msg := why + ": suspended, and queued again at its new size"
		r.recorder.Eventf(gj.Object(), nil, corev1.EventTypeWarning, EventJobGrew, "Suspend", msg)
		r.recorder.Eventf(desired, nil, corev1.EventTypeWarning, EventJobGrew, "Requeue", msg)
	}
	if status.Active() > 0 {
		reportPods(desired, status, r.now())
		return nil
	}
	desired.Status.Phase = schedv1alpha1.QueueUnitPhaseEnqueued
	clearAdmission(desired, reasonJobGrew, why+": queued again at its new size", r.now())
	return nil
}
