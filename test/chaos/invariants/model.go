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

package invariants

import (
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
)

// holdsQuota is the protocol's rule (docs/protocol.md, Quota): a unit is
// charged in these phases and no other.
func holdsQuota(p schedv1alpha1.QueueUnitPhase) bool {
	return p == "Reserved" || p == "Dequeued" || p == "Running"
}

// finished: the unit's job ended (it was admitted to get there).
func finished(p schedv1alpha1.QueueUnitPhase) bool {
	return p == schedv1alpha1.QueueUnitPhaseSucceed || p == schedv1alpha1.QueueUnitPhaseFailed
}

// amounts are quantities in milli-units, by resource name.
type amounts map[corev1.ResourceName]int64

func (a amounts) add(b amounts, sign int64) {
	for r, v := range b {
		a[r] += sign * v
	}
}

// quotaNode is what the checker keeps of an ElasticQuota.
type quotaNode struct {
	parent string
	max    amounts
}

// podState is what the checker keeps of a pod.
type podState struct {
	quota       string
	job         string // namespace/name of the controlling Job, "" if none
	requests    amounts
	live        bool // not Succeeded nor Failed, not being deleted
	terminating bool // being deleted and not finished
	running     bool // live and phase Running
}

func podStateOf(p *corev1.Pod, jobQuota func(key string) string) podState {
	s := podState{requests: amounts{}}
	for r, q := range resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}) {
		s.requests[r] = q.MilliValue()
	}
	for _, o := range p.OwnerReferences {
		if o.Controller != nil && *o.Controller && o.Kind == "Job" {
			s.job = p.Namespace + "/" + o.Name
		}
	}
	s.quota = p.Labels[schedv1alpha1.QuotaNameLabel]
	if s.quota == "" && s.job != "" {
		s.quota = jobQuota(s.job)
	}
	finished := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	s.terminating = !finished && p.DeletionTimestamp != nil
	s.live = !finished && p.DeletionTimestamp == nil
	s.running = s.live && p.Status.Phase == corev1.PodRunning
	return s
}

// unitState is what the checker keeps of a QueueUnit.
type unitState struct {
	job      string // namespace/name of the Job it stands for ("" for other kinds)
	phase    schedv1alpha1.QueueUnitPhase
	replicas int64 // admitted replicas, summed over pod sets
	// quota is the quota its admission charged (status.quota, else its
	// quota label); charge what its admissions say it holds: each pod
	// set's replicas times the resources of one.
	quota  string
	charge amounts
	// attempts is status.attempts: an admission adds one, and so does a
	// pending unit's refusal; nothing else does.
	attempts int64
}

func unitStateOf(u *schedv1alpha1.QueueUnit) unitState {
	s := unitState{phase: u.Status.Phase, quota: u.Status.Quota, charge: amounts{}, attempts: u.Status.Attempts}
	if s.quota == "" {
		s.quota = u.Labels[schedv1alpha1.QuotaNameLabel]
	}
	if u.Spec.ConsumerRef != nil && u.Spec.ConsumerRef.Kind == "Job" {
		s.job = u.Namespace + "/" + u.Spec.ConsumerRef.Name
	}
	for _, a := range u.Status.Admissions {
		s.replicas += int64(a.Replicas)
		for r, q := range a.Resources {
			s.charge[r] += int64(a.Replicas) * q.MilliValue()
		}
	}
	return s
}

func quotaNodeOf(q *eqv1alpha1.ElasticQuota) quotaNode {
	n := quotaNode{parent: q.Labels[eqv1alpha1.ParentLabel], max: amounts{}}
	for r, v := range q.Spec.Max {
		n.max[r] = v.MilliValue()
	}
	return n
}

// chain is quota and its ancestors up to (not including) the root, stopping
// at a missing parent or a cycle.
func chain(quotas map[string]quotaNode, quota string) []string {
	var out []string
	seen := map[string]bool{}
	for q := quota; q != "" && q != eqv1alpha1.RootQuotaName && !seen[q]; {
		seen[q] = true
		out = append(out, q)
		n, ok := quotas[q]
		if !ok {
			break
		}
		q = n.parent
	}
	return out
}
