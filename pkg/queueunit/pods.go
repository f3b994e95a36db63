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

package queueunit

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// PodSetPods counts the pods of one pod set of a unit's job.
type PodSetPods struct {
	Name     string
	Running  int32
	Pending  int32
	Finished int32
}

// ReportPods writes what the extension reports of an admitted job's pods
// (sets not listed have none): status.podState, admissions[].running,
// reclaimablePods (the finished pods of each set, at most its count), phase
// Running once a pod of a Dequeued unit runs, and PodsReady=True once a
// Running unit's started pods all run.
func ReportPods(u *schedv1alpha1.QueueUnit, sets []PodSetPods, now metav1.Time) {
	var running, pending int32
	byName := map[string]PodSetPods{}
	for _, ps := range sets {
		running += ps.Running
		pending += ps.Pending
		byName[ps.Name] = ps
	}
	if running != 0 || pending != 0 || u.Status.PodState != nil {
		u.Status.PodState = &schedv1alpha1.PodState{Running: running, Pending: pending}
	}
	for i := range u.Status.Admissions {
		u.Status.Admissions[i].Running = byName[u.Status.Admissions[i].Name].Running
	}
	var reclaimable []schedv1alpha1.ReclaimablePod
	for _, ps := range u.Spec.PodSet {
		if n := byName[ps.Name].Finished; n > 0 {
			reclaimable = append(reclaimable, schedv1alpha1.ReclaimablePod{Name: ps.Name, Count: min(n, ps.Count)})
		}
	}
	u.Status.ReclaimablePods = reclaimable
	if running > 0 && u.Status.Phase == schedv1alpha1.QueueUnitPhaseDequeued {
		u.Status.Phase = schedv1alpha1.QueueUnitPhaseRunning
	}
	if running > 0 && pending == 0 && u.Status.Phase == schedv1alpha1.QueueUnitPhaseRunning {
		SetCondition(u, schedv1alpha1.ConditionPodsReady, metav1.ConditionTrue, ReasonPodsRunning, "all started pods run", now)
	}
}

// MarkFinished ends a unit whose job finished: phase Succeed (or Failed) and
// condition Finished=True with reason ReasonJobSucceeded (ReasonJobFailed)
// and message, "job finished" when the job gives none. The caller reports
// the job's last pods with ReportPods.
func MarkFinished(u *schedv1alpha1.QueueUnit, failed bool, message string, now metav1.Time) {
	u.Status.Phase = schedv1alpha1.QueueUnitPhaseSucceed
	reason := ReasonJobSucceeded
	if failed {
		u.Status.Phase = schedv1alpha1.QueueUnitPhaseFailed
		reason = ReasonJobFailed
	}
	if message == "" {
		message = "job finished"
	}
	SetCondition(u, schedv1alpha1.ConditionFinished, metav1.ConditionTrue, reason, message, now)
}

// ConditionPodsRefusedByQuota is the extension's condition on an admitted
// unit whose pods koord-scheduler refuses for quota (running beside
// Koordinator, docs/protocol.md): True with ReasonPodsRefusedByQuota while it
// does, False with ReasonNoPodRefused once it no longer does.
const ConditionPodsRefusedByQuota = "PodsRefusedByQuota"

// Reasons of ConditionPodsRefusedByQuota.
const (
	ReasonPodsRefusedByQuota = "PodsRefusedByQuota"
	ReasonNoPodRefused       = "NoPodRefused"
)

// MarkRefusedByQuota says that koord-scheduler refuses pods of an admitted
// unit for quota: ConditionPodsRefusedByQuota=True with message, dated since
// (when the refusal began, but not before the unit's last admission). A
// refusal already told keeps its message and time: Koordinator's message
// changes with the quota's usage, and rewriting it would write the status at
// every retry of the pod. One that dates from before the unit's last
// admission (DequeuedAt) belongs to an earlier admission and is replaced. It
// reports whether a new refusal began.
func MarkRefusedByQuota(u *schedv1alpha1.QueueUnit, message string, since metav1.Time) bool {
	if _, ok := RefusedByQuotaSince(u); ok {
		return false
	}
	if dequeued := DequeuedAt(u); since.Before(&dequeued) {
		since = dequeued
	}
	meta.RemoveStatusCondition(&u.Status.Conditions, ConditionPodsRefusedByQuota)
	SetCondition(u, ConditionPodsRefusedByQuota, metav1.ConditionTrue, ReasonPodsRefusedByQuota, message, since)
	return true
}

// EndRefusedByQuota turns ConditionPodsRefusedByQuota False once no pod of the
// unit is refused; a unit without the condition gets none. It reports whether
// it changed u.
func EndRefusedByQuota(u *schedv1alpha1.QueueUnit, now metav1.Time) bool {
	c := meta.FindStatusCondition(u.Status.Conditions, ConditionPodsRefusedByQuota)
	if c == nil || c.Status != metav1.ConditionTrue {
		return false
	}
	SetCondition(u, ConditionPodsRefusedByQuota, metav1.ConditionFalse, ReasonNoPodRefused,
		"koord-scheduler no longer refuses the unit's pods for quota", now)
	return true
}

// RefusedByQuotaSince is when the refusal of the unit's pods for quota began:
// the time of ConditionPodsRefusedByQuota=True, when that is not older than
// the unit's last admission. The extension's quota refusal timeout counts
// from it.
func RefusedByQuotaSince(u *schedv1alpha1.QueueUnit) (metav1.Time, bool) {
	c := meta.FindStatusCondition(u.Status.Conditions, ConditionPodsRefusedByQuota)
	if c == nil || c.Status != metav1.ConditionTrue {
		return metav1.Time{}, false
	}
	if dequeued := DequeuedAt(u); c.LastTransitionTime.Before(&dequeued) {
		return metav1.Time{}, false
	}
	return c.LastTransitionTime, true
}
