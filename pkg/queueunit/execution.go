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
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// The execution budget (spec.maximumExecutionTimeSeconds, feature gate
// MaximumExecutionTime) is counted from PodsReady: a run's time is banked in
// status.accumulatedPastExecutionTimeSeconds when the unit is evicted.

// RunningSince is when a unit's pods started running: the PodsReady
// condition's transition to True, else nil.
func RunningSince(u *schedv1alpha1.QueueUnit) *time.Time {
	c := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionPodsReady)
	if c == nil || c.Status != metav1.ConditionTrue {
		return nil
	}
	t := c.LastTransitionTime.Time
	return &t
}

// ExecutionUsed is how much of its budget a unit used: the time banked by
// earlier runs plus the current run.
func ExecutionUsed(u *schedv1alpha1.QueueUnit, now time.Time) time.Duration {
	var used time.Duration
	if u.Status.AccumulatedPastExecutionTimeSeconds != nil {
		used = time.Duration(*u.Status.AccumulatedPastExecutionTimeSeconds) * time.Second
	}
	if u.Status.Phase == schedv1alpha1.QueueUnitPhaseRunning {
		if since := RunningSince(u); since != nil && now.After(*since) {
			used += now.Sub(*since)
		}
	}
	return used
}

// Budget is a unit's execution budget, or 0 when it has none.
func Budget(u *schedv1alpha1.QueueUnit) time.Duration {
	if u.Spec.MaximumExecutionTimeSeconds == nil {
		return 0
	}
	return time.Duration(*u.Spec.MaximumExecutionTimeSeconds) * time.Second
}

// BankExecutionTime adds the current run of a Running unit whose pods run to
// its banked execution time; it changes nothing for any other unit.
func BankExecutionTime(u *schedv1alpha1.QueueUnit, now time.Time) {
	if u.Status.Phase != schedv1alpha1.QueueUnitPhaseRunning || RunningSince(u) == nil {
		return
	}
	used := ExecutionUsed(u, now)
	u.Status.AccumulatedPastExecutionTimeSeconds = ptr.To(int32(used / time.Second))
}
