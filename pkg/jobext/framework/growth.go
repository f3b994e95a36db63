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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	ctrl "sigs.k8s.io/controller-runtime"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queueunit"
	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
)

// EventJobGrew: a running job asks for more than its unit was admitted with.
const EventJobGrew = "JobGrew"

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
		if name, want, got, ok := larger(resources.PodRequests(&ps.Template.Spec), a.Resources); ok {
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

// runAdmitted runs a Dequeued or Running job within its admission: a job
// that grew beyond it (or turned invalid: its demand cannot be counted any
// more) is held at its admitted size; one that shrank gives the difference
// back once its pods fit the new size.
func (r *Reconciler) runAdmitted(ctx context.Context, gj GenericJob, unit, desired *schedv1alpha1.QueueUnit, status JobStatus, pods []corev1.Pod) (ctrl.Result, error) {
	sets, err := r.podSets(ctx, gj)
	var invalid *invalidJobError
	if errors.As(err, &invalid) {
		return ctrl.Result{}, r.holdAtAdmission(ctx, gj, desired, status, err.Error())
	}
	var missing *MissingError
	if errors.As(err, &missing) {
		// What its pods depend on went (a TrainJob's runtime deleted): the
		// pods it already has keep their admission, unchecked for growth.
		return r.run(ctx, gj, desired, status, pods)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if why := Exceeds(sets, queueunit.AdmittedWith(unit)); why != "" {
		return ctrl.Result{}, r.holdAtAdmission(ctx, gj, desired, status, why)
	}
	result, err := r.run(ctx, gj, desired, status, pods)
	if err == nil {
		GiveBackShrunk(desired, sets, status)
	}
	return result, err
}

// GiveBackShrunk adds to reclaimablePods the admitted pods a set no longer
// runs (its count was lowered below its admitted replicas), once the set's
// active pods fit the lower count: pods still terminating keep their share.
func GiveBackShrunk(unit *schedv1alpha1.QueueUnit, sets []PodSet, status JobStatus) {
	counts := make(map[string]int32, len(sets))
	for i := range sets {
		counts[sets[i].Name] = sets[i].Count
	}
	active := map[string]int32{}
	for _, ps := range status.PodSets {
		active[ps.Name] = ps.Running + ps.Pending
	}
	reclaimable := map[string]int32{}
	for _, rp := range unit.Status.ReclaimablePods {
		reclaimable[rp.Name] = rp.Count
	}
	changed := false
	for _, a := range unit.Status.Admissions {
		n, ok := counts[a.Name]
		if !ok || n >= a.Replicas || active[a.Name] > n {
			continue
		}
		if give := min(reclaimable[a.Name]+a.Replicas-n, a.Replicas); give > reclaimable[a.Name] {
			reclaimable[a.Name] = give
			changed = true
		}
	}
	if !changed {
		return
	}
	var out []schedv1alpha1.ReclaimablePod
	for _, a := range unit.Status.Admissions {
		if n := reclaimable[a.Name]; n > 0 {
			out = append(out, schedv1alpha1.ReclaimablePod{Name: a.Name, Count: n})
		}
	}
	unit.Status.ReclaimablePods = out
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
	if gone, err := r.podsGone(ctx, desired, status); !gone || err != nil {
		reportPods(desired, status, r.now())
		return err
	}
	queueunit.Requeue(desired, queueunit.ReasonJobGrew, why+": queued again at its new size", r.now())
	return nil
}
