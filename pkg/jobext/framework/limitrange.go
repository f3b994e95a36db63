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
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
)

// WithLimitRangeDefaults fills in, on a copy of the pod sets, the requests and
// limits the namespace's LimitRanges give containers that lack them, as the
// API server does when the pods are created: a limit without a request is
// the request (pod defaulting), then a request still missing takes the
// LimitRanger's Container item defaultRequest, a missing limit its default (the
// API server already copied default into an unset defaultRequest when it
// stored the LimitRange). Where several LimitRanges give a default, the first
// by name wins. A request still missing then falls back to the limit, as
// pkg/util/resources counts it. So a unit is charged what its pods will get.
func WithLimitRangeDefaults(sets []PodSet, ranges []corev1.LimitRange) []PodSet {
	if len(ranges) == 0 {
		return sets
	}
	ranges = slices.Clone(ranges)
	slices.SortFunc(ranges, func(a, b corev1.LimitRange) int { return strings.Compare(a.Name, b.Name) })
	out := make([]PodSet, len(sets))
	for i := range sets {
		out[i] = sets[i]
		out[i].Template = *sets[i].Template.DeepCopy()
		spec := &out[i].Template.Spec
		for j := range spec.Containers {
			defaultContainer(&spec.Containers[j], ranges)
		}
		for j := range spec.InitContainers {
			defaultContainer(&spec.InitContainers[j], ranges)
		}
	}
	return out
}

func defaultContainer(c *corev1.Container, ranges []corev1.LimitRange) {
	// The API server's own defaulting runs before LimitRanger: a limit
	// without a request becomes the request.
	fillMissing(&c.Resources.Requests, c.Resources.Limits)
	for i := range ranges {
		for _, item := range ranges[i].Spec.Limits {
			if item.Type != corev1.LimitTypeContainer {
				continue
			}
			fillMissing(&c.Resources.Requests, item.DefaultRequest)
			fillMissing(&c.Resources.Limits, item.Default)
		}
	}
}

func fillMissing(into *corev1.ResourceList, defaults corev1.ResourceList) {
	for name, q := range defaults {
		if _, ok := (*into)[name]; ok {
			continue
		}
		if *into == nil {
			*into = corev1.ResourceList{}
		}
		(*into)[name] = q.DeepCopy()
	}
}

// checkSets refuses pod sets whose demand quota cannot count: a negative
// amount, or one beyond resources.MaxAmount once multiplied and summed.
func checkSets(sets []PodSet) error {
	d := resources.Demand{}
	for i := range sets {
		ps := &sets[i]
		if err := d.Add(fmt.Sprintf("pod set %s", ps.Name), resources.PodRequests(&ps.Template.Spec), int64(ps.Count)); err != nil {
			return err
		}
	}
	return nil
}

// podSets is the job's pod sets as its pods will be: what they depend on
// resolved (a *MissingError when it is not there), LimitRange defaults
// applied, amounts checked.
func (r *Reconciler) podSets(ctx context.Context, gj GenericJob) ([]PodSet, error) {
	if res, ok := gj.(Resolver); ok {
		if err := res.Resolve(ctx, r.client); err != nil {
			return nil, err
		}
	}
	sets, err := gj.PodSets()
	if err != nil {
		return nil, &invalidJobError{err: err}
	}
	ranges := &corev1.LimitRangeList{}
	if err := r.client.List(ctx, ranges, client.InNamespace(gj.Object().GetNamespace())); err != nil {
		return nil, fmt.Errorf("list limit ranges: %w", err)
	}
	sets = WithLimitRangeDefaults(sets, ranges.Items)
	if err := checkSets(sets); err != nil {
		return nil, &invalidJobError{err: fmt.Errorf("invalid request: %w", err)}
	}
	return sets, nil
}

// invalidJobError is a job the queue cannot count, as opposed to a failed read.
type invalidJobError struct{ err error }

func (e *invalidJobError) Error() string { return e.err.Error() }
func (e *invalidJobError) Unwrap() error { return e.err }
