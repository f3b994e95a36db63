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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// QueuePolicy decides how a Queue hands out its units.
// +kubebuilder:validation:Enum=Priority;Block;Intelligent
type QueuePolicy string

const (
	// QueuePolicyPriority skips a unit that does not fit and goes on with the next.
	QueuePolicyPriority QueuePolicy = "Priority"
	// QueuePolicyBlock makes a unit that does not fit hold back later units of its quota.
	QueuePolicyBlock QueuePolicy = "Block"
	// QueuePolicyIntelligent treats units at or above a priority threshold like
	// Block and the rest like Priority.
	QueuePolicyIntelligent QueuePolicy = "Intelligent"
)

// Annotations and labels that tune a Queue. On an ElasticQuota they are copied
// onto the Queue created for it.
const (
	// QueuePolicyLabel on an ElasticQuota picks the policy of its Queue.
	QueuePolicyLabel = "koord-queue/queue-policy"
	// PriorityThresholdAnnotation is the Intelligent policy's split point.
	PriorityThresholdAnnotation = "koord-queue/priority-threshold"
	// MaxDepthAnnotation bounds how many units one pass looks at.
	MaxDepthAnnotation = "koord-queue/max-depth"
	// WaitForPodsRunningAnnotation serialises admission in a queue until the
	// previously admitted unit's pods run.
	WaitForPodsRunningAnnotation = "koord-queue/wait-for-pods-running"
	// PreemptionPolicyAnnotation opts a queue into preemption inside its
	// quotas: Never (default) or LowerPriority. spec.preemptionPolicy of a
	// Queue wins over it.
	PreemptionPolicyAnnotation = "koord-queue/preemption-policy"
	// MaxPriorityAnnotation is the highest priority a unit of the queue gets,
	// whatever its job asks (scheduling.x-k8s.io/priority or its pods'
	// PriorityClass): a tenant cannot outrank the ceiling its quota sets.
	MaxPriorityAnnotation = "koord-queue/max-priority"
	// DefaultMaxPriority is the ceiling of a queue without
	// MaxPriorityAnnotation: Kubernetes' highest priority a user-defined
	// PriorityClass may have (values above are its system classes), so no
	// tenant's unit outranks that bound unless a quota's owner allows it.
	DefaultMaxPriority int32 = 1000000000
	// MaxWaitAnnotation bounds how long a unit that does not fit waits under
	// the Priority policy (and Intelligent's low band): a Go duration such as
	// "30m". Once its head-of-line unit has waited longer, the queue admits no
	// later unit of the same quota until that unit is admitted. Off by default.
	MaxWaitAnnotation = "koord-queue/max-wait"
	// HoldRoomAnnotation "true" opts a queue into holding room in its cohort
	// for its waiting units: a unit of higher priority that does not fit yet
	// keeps units of lower priority of the whole cohort out of the room it
	// waits for. Off by default. spec.holdRoomForHigherPriority of a Queue
	// wins over it.
	HoldRoomAnnotation = "koord-queue/hold-room-for-higher-priority"
	// AnnotationPrefix is what every koord-queue tuning annotation starts with.
	AnnotationPrefix = "koord-queue/"

	// QueueNamespace is the namespace of the Queues koord-queue serves: the
	// Queue made for each ElasticQuota, and hand-made ones. A Queue in any other
	// namespace is ignored with a warning event.
	QueueNamespace = "koord-queue"

	// DefaultPriorityThreshold is the Intelligent split point when none is set.
	DefaultPriorityThreshold int32 = 4
)

// PreemptionPolicy says whether a unit that does not fit its quota may evict
// admitted units of the same quota.
// +kubebuilder:validation:Enum=Never;LowerPriority
type PreemptionPolicy string

const (
	// PreemptionNever never evicts a running unit to make room inside a quota
	// (reclaim of borrowed capacity is separate and stays on).
	PreemptionNever PreemptionPolicy = "Never"
	// PreemptionLowerPriority evicts admitted units of lower priority in the
	// same quota.
	PreemptionLowerPriority PreemptionPolicy = "LowerPriority"
)

// AdmissionCheckWithSelector names an admission check that units of a Queue must
// pass, for the units its selector matches (all units when it is nil).
type AdmissionCheckWithSelector struct {
	// Name of the AdmissionCheck.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// LabelSelector picks the units that need this check; nil picks every unit.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// QueueSpec is what a Queue asks for.
type QueueSpec struct {
	// QueuePolicy is Priority, Block or Intelligent.
	// +kubebuilder:default=Priority
	// +optional
	QueuePolicy QueuePolicy `json:"queuePolicy,omitempty"`
	// Priority orders queues against each other: higher goes first.
	// +optional
	Priority *int32 `json:"priority,omitempty"`
	// PriorityClassName names a PriorityClass whose value is the queue's priority
	// when Priority is unset.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// PreemptionPolicy is Never (the default) or LowerPriority: whether a unit
	// that does not fit may evict lower-priority admitted units of its own
	// quota. When unset, the annotation koord-queue/preemption-policy decides.
	// +optional
	PreemptionPolicy PreemptionPolicy `json:"preemptionPolicy,omitempty"`
	// HoldRoomForHigherPriority, when true, makes a unit of this queue that
	// waits for room it could get once units of lower priority finish hold
	// that room in its cohort: units of lower priority of any queue of the
	// cohort are admitted only beside it. Off by default (a unit that does
	// not fit is skipped, as the policy says). When unset, the annotation
	// koord-queue/hold-room-for-higher-priority decides.
	// +optional
	HoldRoomForHigherPriority *bool `json:"holdRoomForHigherPriority,omitempty"`
	// AdmissionChecks that units of this queue must pass before they are dequeued.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	AdmissionChecks []AdmissionCheckWithSelector `json:"admissionChecks,omitempty"`
}

// QueueItemDetail is one pending unit of a queue, in scheduling order.
type QueueItemDetail struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// +optional
	Priority int32 `json:"priority,omitempty"`
	// Position is 1 for the unit that is tried first.
	Position int32 `json:"position"`
}

// QueueStatus reports what a queue holds. It is refreshed periodically, and only
// written when it changed.
type QueueStatus struct {
	// Pending counts units waiting for admission.
	// +optional
	Pending int32 `json:"pending,omitempty"`
	// Admitted counts units holding quota (Reserved, Dequeued or Running).
	// +optional
	Admitted int32 `json:"admitted,omitempty"`
	// QueueItemDetails lists the first pending units in scheduling order.
	// +optional
	QueueItemDetails []QueueItemDetail `json:"queueItemDetails,omitempty"`
}

// Queue holds QueueUnits and hands them out by its policy.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=kq
// +kubebuilder:printcolumn:name="POLICY",type=string,JSONPath=`.spec.queuePolicy`
// +kubebuilder:printcolumn:name="PRIORITY",type=integer,JSONPath=`.spec.priority`
// +kubebuilder:printcolumn:name="PENDING",type=integer,JSONPath=`.status.pending`
// +kubebuilder:printcolumn:name="ADMITTED",type=integer,JSONPath=`.status.admitted`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type Queue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   QueueSpec   `json:"spec,omitempty"`
	Status QueueStatus `json:"status,omitempty"`
}

// QueueList is a list of Queues.
//
// +kubebuilder:object:root=true
type QueueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Queue `json:"items"`
}
