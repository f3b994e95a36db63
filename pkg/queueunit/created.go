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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// StampLead is how long before a job's creationTimestamp its webhook stamp
// may be: the webhook sees the request before the API server stores it and
// stamps the object. A stamp further off is not the webhook's and is ignored.
const StampLead = 5 * time.Second

// JobCreated is a job's place in time: its koord-queue/created-at stamp when
// that falls between StampLead before its creationTimestamp and the end of
// that second, else the creationTimestamp itself (a job created while the
// webhook was away, or a stamp edited later). The stamp only orders jobs
// within one second; it cannot move a job by more than StampLead.
func JobCreated(created metav1.Time, annotations map[string]string) time.Time {
	base := created.Time
	stamp, err := time.Parse(time.RFC3339Nano, annotations[schedv1alpha1.CreatedAtAnnotation])
	if err != nil || stamp.Before(base.Add(-StampLead)) || !stamp.Before(base.Add(time.Second)) {
		return base
	}
	return stamp
}

// FormatCreated writes a time as the created-at annotations hold it.
func FormatCreated(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Created is when a unit's work was submitted, which orders units of one
// priority: the job's time recorded by the extension
// (koord-queue/job-created-at), else the unit's own creationTimestamp. A
// recorded time after the unit's own creation second is not its job's (a
// job exists before its unit) and is ignored.
func Created(u *schedv1alpha1.QueueUnit) time.Time {
	own := u.CreationTimestamp.Time
	t, err := time.Parse(time.RFC3339Nano, u.Annotations[schedv1alpha1.JobCreatedAtAnnotation])
	if err != nil || !t.Before(own.Add(time.Second)) {
		return own
	}
	return t
}
