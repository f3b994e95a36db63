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
	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// IsPending reports whether a unit in phase p waits for admission: new
// (no phase yet) or Enqueued.
func IsPending(p schedv1alpha1.QueueUnitPhase) bool {
	return p == schedv1alpha1.QueueUnitPhaseNone || p == schedv1alpha1.QueueUnitPhaseEnqueued
}

// HoldsQuota reports whether a unit in phase p is charged to its quota:
// Reserved (admission checks pending), Dequeued and Running.
func HoldsQuota(p schedv1alpha1.QueueUnitPhase) bool {
	switch p {
	case schedv1alpha1.QueueUnitPhaseReserved, schedv1alpha1.QueueUnitPhaseDequeued, schedv1alpha1.QueueUnitPhaseRunning:
		return true
	}
	return false
}

// IsFinished reports whether a unit in phase p is done: Succeed or Failed.
func IsFinished(p schedv1alpha1.QueueUnitPhase) bool {
	return p == schedv1alpha1.QueueUnitPhaseSucceed || p == schedv1alpha1.QueueUnitPhaseFailed
}

// IsWaiting reports whether a unit in phase p waits, for admission or for the
// end of a backoff: new, Enqueued or TimeoutBackoff. While it waits the
// extension keeps its spec in step with the job and its quota label with the
// job's.
func IsWaiting(p schedv1alpha1.QueueUnitPhase) bool {
	return IsPending(p) || p == schedv1alpha1.QueueUnitPhaseTimeoutBackoff
}
