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
