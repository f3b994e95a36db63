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
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	lwsv1 "sigs.k8s.io/lws/api/leaderworkerset/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

// Name is the extension's name; group i of LeaderWorkerSet NAME has the unit
// "NAME-i-leaderworkerset".
const Name = "leaderworkerset"

// The pod sets of a group's unit.
const (
	LeaderSet  = "leader"
	WorkersSet = "workers"
)

// New describes the LeaderWorkerSet extension.
func New(framework.ExtensionOptions) framework.Extension {
	ext := framework.Typed(framework.Extension{
		Name: Name, GVK: lwsv1.SchemeGroupVersion.WithKind("LeaderWorkerSet"),
		CRD: "leaderworkersets.leaderworkerset.x-k8s.io",
	}, Wrap)
	ext.HoldsPod = HoldsPod
	return ext
}

// HoldsPod reports a pod of a queued LeaderWorkerSet: it carries the set's
// name label (its StatefulSet's template has it) and the quota label (the
// webhook put it on the set's templates).
func HoldsPod(p *corev1.Pod) bool {
	return p.Labels[lwsv1.SetNameLabelKey] != "" && p.Labels[schedv1alpha1.QuotaNameLabel] != "" && p.Namespace != metav1.NamespaceSystem
}

// LWS is a LeaderWorkerSet seen by the queue, as the webhook sees it: its
// templates take the quota label; it has nothing to suspend.
type LWS struct{ l *lwsv1.LeaderWorkerSet }

var _ framework.GenericJob = (*LWS)(nil)

// Wrap wraps a LeaderWorkerSet.
func Wrap(l *lwsv1.LeaderWorkerSet) *LWS { return &LWS{l: l} }

// Object returns the LeaderWorkerSet.
func (w *LWS) Object() client.Object { return w.l }

// IsSuspended is false: the kind has no suspension; its pods are held.
func (w *LWS) IsSuspended() bool { return false }

// Suspend does nothing: the pods are held by the gate.
func (w *LWS) Suspend() {}

// Resume does nothing: the pods are let go by removing the gate.
func (w *LWS) Resume() {}

// PodSets are one group's: the leader and the workers.
func (w *LWS) PodSets() ([]framework.PodSet, error) { return GroupPodSets(w.l) }

// Status is empty: a LeaderWorkerSet never ends; its groups are reported
// per unit.
func (w *LWS) Status() framework.JobStatus { return framework.JobStatus{} }

// SetPodLabels labels both templates, but not with the unit's name: each
// group has a unit of its own, written on its pods when they are let go.
func (w *LWS) SetPodLabels(labels map[string]string) []framework.ReplacedLabel {
	own := make(map[string]string, len(labels))
	for k, v := range labels {
		if k != schedv1alpha1.QueueUnitLabel {
			own[k] = v
		}
	}
	lwt := &w.l.Spec.LeaderWorkerTemplate
	var replaced []framework.ReplacedLabel
	if lwt.LeaderTemplate != nil {
		replaced = framework.SetLabels(&lwt.LeaderTemplate.Labels, own, "spec.leaderWorkerTemplate.leaderTemplate")
	}
	return append(replaced, framework.SetLabels(&lwt.WorkerTemplate.Labels, own, "spec.leaderWorkerTemplate.workerTemplate")...)
}

// Size is the number of pods of a group (spec.leaderWorkerTemplate.size,
// 1 when unset).
func Size(l *lwsv1.LeaderWorkerSet) int32 {
	return ptr.Deref(l.Spec.LeaderWorkerTemplate.Size, 1)
}

// Replicas is the number of groups (spec.replicas, 1 when unset).
func Replicas(l *lwsv1.LeaderWorkerSet) int32 { return ptr.Deref(l.Spec.Replicas, 1) }

// GroupPodSets are the pod sets of one group: the leader (its own template,
// else the workers') and size-1 workers. The error names a size below 1.
func GroupPodSets(l *lwsv1.LeaderWorkerSet) ([]framework.PodSet, error) {
	size := Size(l)
	if size < 1 {
		return nil, fmt.Errorf("spec.leaderWorkerTemplate.size is %d; a group has at least its leader", size)
	}
	lwt := &l.Spec.LeaderWorkerTemplate
	leader := lwt.WorkerTemplate
	if lwt.LeaderTemplate != nil {
		leader = *lwt.LeaderTemplate
	}
	sets := []framework.PodSet{{Name: LeaderSet, Count: 1, Template: *leader.DeepCopy()}}
	if size > 1 {
		sets = append(sets, framework.PodSet{Name: WorkersSet, Count: size - 1, Template: *lwt.WorkerTemplate.DeepCopy()})
	}
	return sets, nil
}

// TemplateQuota is the quota label of the set's templates, the mark that the
// webhook held it, and whether every template agrees on it.
func TemplateQuota(l *lwsv1.LeaderWorkerSet) (string, bool) {
	lwt := &l.Spec.LeaderWorkerTemplate
	q := lwt.WorkerTemplate.Labels[schedv1alpha1.QuotaNameLabel]
	if lwt.LeaderTemplate != nil && lwt.LeaderTemplate.Labels[schedv1alpha1.QuotaNameLabel] != q {
		return q, false
	}
	return q, true
}

// UnitName names the unit of group i.
func UnitName(ext *framework.Extension, lwsName string, group int32) string {
	return framework.UnitName(ext, lwsName+"-"+strconv.Itoa(int(group)))
}

// GroupOf reads a pod's group index; ok is false for a pod without one yet.
func GroupOf(p *corev1.Pod) (int32, bool) {
	v, ok := p.Labels[lwsv1.GroupIndexLabelKey]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 0 {
		return 0, false
	}
	return int32(n), true
}

// IsLeader reports a group's leader pod: worker index 0.
func IsLeader(p *corev1.Pod) bool { return p.Labels[lwsv1.WorkerIndexLabelKey] == "0" }
