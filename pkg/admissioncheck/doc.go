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
