// Package admissioncheck owns the lifecycle decisions the scheduler takes
// after a unit holds quota, as pure functions of the unit, its checks and the
// time: Reserved -> Dequeued when every admission check is Ready; Reserved ->
// TimeoutBackoff on Retry, Rejected or silence past the timeout; back to
// Enqueued when the backoff ends; and the execution budget of running units
// (feature gate MaximumExecutionTime). The scheduler's lifecycle controller
// applies what these functions decide; the status it writes for each, whose
// backoff a TimeoutBackoff is and how much of its budget a unit used are the
// rules of pkg/queueunit.
package admissioncheck
