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

package view

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/queue"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// PendingUnit is a copy of one pending unit as its queue holds it.
type PendingUnit struct {
	Namespace, Name string
	// Quota pays for the unit.
	Quota    schedtypes.QuotaName
	Priority int32
	// Position is 1 for the unit tried first.
	Position int
	Request  schedtypes.Resources
	// Created is the unit's creation; Enqueued when the queue took it.
	Created, Enqueued time.Time
}

// Reader is the scheduler as the read-only APIs see it. Every answer is a
// copy the caller may keep and change.
type Reader interface {
	// QueueNames lists the queues in the order they are served.
	QueueNames() []schedtypes.QueueName
	// QueueSettings returns a queue's settings; false when it is unknown.
	QueueSettings(name schedtypes.QueueName) (queue.Settings, bool)
	// Pending lists a queue's pending units in the order they are tried.
	Pending(name schedtypes.QueueName) ([]PendingUnit, bool)
	// PendingCounts counts the pending units of every queue.
	PendingCounts() map[schedtypes.QueueName]int
	// Orphans lists, by queue name, the units of queues that do not exist.
	Orphans() map[schedtypes.QueueName][]schedtypes.UnitKey
	// Quotas lists the quotas with their usage.
	Quotas() []schedtypes.Info
	// Map returns the queue and the quota of a unit.
	Map(u *schedv1alpha1.QueueUnit) (queueName schedtypes.QueueName, quotaName schedtypes.QuotaName)
	// Cohort returns the cohort of a quota.
	Cohort(quotaName schedtypes.QuotaName) schedtypes.CohortName
	// Objects reads the QueueUnits the scheduler is fed from (its informer
	// cache). Objects read with client.UnsafeDisableDeepCopy are shared:
	// never change them.
	Objects() client.Reader
	// Leading reports whether this replica leads with complete caches (it
	// admits and writes statuses); a follower's queues follow the leader's
	// by one status write.
	Leading() bool
	// Unsynced names what this replica has not read in full yet (kinds such
	// as "QueueUnits", and "quota plugins"); empty once all is read.
	Unsynced() []string
}
