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
