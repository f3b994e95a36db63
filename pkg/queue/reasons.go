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

package queue

import (
	"fmt"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// The texts below tell a waiting unit what the queue holds it back for
// (docs/protocol.md lists them). None carries a count or position that moves
// when another unit is admitted: a unit's text changes only when what it
// waits for changes, so it is written only then.

// BehindMessage is the wait of a unit behind the unit directly ahead of it
// (namespace/name) in its quota, under Block or in Intelligent's high band.
func BehindMessage(namespace, name string, q Settings, quotaName schedtypes.QuotaName) string {
	if q.Policy == schedv1alpha1.QueuePolicyIntelligent {
		return fmt.Sprintf("waiting behind %s/%s, the unit directly ahead of it in quota %s among the high-band units (priority %d and above, %s) of Intelligent queue %s, which are admitted in order",
			namespace, name, quotaName, q.Threshold, schedv1alpha1.PriorityThresholdAnnotation, q.Name)
	}
	return fmt.Sprintf("waiting behind %s/%s, the unit directly ahead of it in quota %s of Block queue %s, which admits the units of a quota in order",
		namespace, name, quotaName, q.Name)
}

// HighBandMessage is the wait of a low-band unit of an Intelligent queue
// while high-band units of its quota wait; namespace/name is the last of them.
func HighBandMessage(namespace, name string, priority int32, q Settings, quotaName schedtypes.QuotaName) string {
	return fmt.Sprintf("held back: high-band unit %s/%s (priority %d, %s %d) of Intelligent queue %s waits for quota %s; low-band units may not take its room",
		namespace, name, priority, schedv1alpha1.PriorityThresholdAnnotation, q.Threshold, q.Name, quotaName)
}

// PreemptorMessage is the wait of a unit behind a unit of its quota for which
// room is being made by preemption.
func PreemptorMessage(namespace, name string, priority int32, quotaName schedtypes.QuotaName) string {
	return fmt.Sprintf("held back: room is being made in quota %s by preemption for %s/%s (priority %d); later units of the quota wait until it is admitted",
		quotaName, namespace, name, priority)
}

// ReservingMessage is the wait of a unit behind a unit of its quota that has
// waited longer than its queue's max-wait.
func ReservingMessage(namespace, name string, q Settings, quotaName schedtypes.QuotaName) string {
	return fmt.Sprintf("held back: %s/%s has waited longer than %s %s and reserves quota %s; later units of the quota wait until it is admitted",
		namespace, name, schedv1alpha1.MaxWaitAnnotation, q.MaxWait, quotaName)
}

// DepthMessage is the wait of a unit a pass did not reach because of the
// queue's max-depth.
func DepthMessage(q Settings) string {
	return fmt.Sprintf("waiting in queue %s: not examined yet, as each pass looks at the first %d units of the queue (%s); it is examined once the units ahead of it are admitted",
		q.Name, q.MaxDepth, schedv1alpha1.MaxDepthAnnotation)
}

// WaitForPodsMessage is the wait of the units of a queue that admits its next
// unit only once the pods of the last one it admitted are running.
func WaitForPodsMessage(queueName schedtypes.QueueName) string {
	return fmt.Sprintf("waiting in queue %s: it admits its next unit once the pods of the unit it admitted last are running (%s)",
		queueName, schedv1alpha1.WaitForPodsRunningAnnotation)
}
