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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Labels and annotations on jobs and QueueUnits.
const (
	// QuotaNameLabel names the ElasticQuota that pays for a job; the Queue of the
	// same name holds its unit.
	QuotaNameLabel = "quota.scheduling.koordinator.sh/name"
	// SuspendAnnotation suspends TFJob, PyTorchJob and SparkApplication.
	SuspendAnnotation = "scheduling.x-k8s.io/suspend"
	// PriorityAnnotation on a job overrides the priority taken from its pods.
	PriorityAnnotation = "scheduling.x-k8s.io/priority"
	// ActiveAnnotation "false" on a job pauses it (feature gate QueueUnitActive).
	ActiveAnnotation = "scheduling.x-k8s.io/active"
	// MaxExecTimeSecondsAnnotation is a job's execution budget (feature gate
	// MaximumExecutionTime).
	MaxExecTimeSecondsAnnotation = "scheduling.x-k8s.io/max-exec-time-seconds"
	// CreatedAtAnnotation on a job is when the API server accepted its
	// creation, to the nanosecond (RFC 3339), stamped by koord-queue-controllers'
	// webhook: it orders jobs created within the same second.
	CreatedAtAnnotation = "koord-queue/created-at"
	// JobCreatedAtAnnotation on a unit is its job's place in time (RFC 3339,
	// nanoseconds), written by the extension: the job's CreatedAtAnnotation
	// when it falls within the job's creation second, else the job's
	// creationTimestamp. The queues order units of one priority by it.
	JobCreatedAtAnnotation = "koord-queue/job-created-at"
	// QueueUnitLabel on a pod names the QueueUnit (of the pod's namespace)
	// whose admission the pod runs under. koord-queue-controllers puts it,
	// with QuotaNameLabel, on every pod template of a managed job, so
	// koord-scheduler charges the pods to the quota koord-queue charged and
	// koord-queue tells its own units' pods from other usage of a quota.
	QueueUnitLabel = "koord-queue/queue-unit"

	// MaxPodSets is the most pod sets one unit may have.
	MaxPodSets = 8
)

// QueueUnitPhase is where a unit is in its life.
type QueueUnitPhase string

const (
	// QueueUnitPhaseNone is a unit nobody has looked at yet.
	QueueUnitPhaseNone QueueUnitPhase = ""
	// QueueUnitPhaseEnqueued waits for admission.
	QueueUnitPhaseEnqueued QueueUnitPhase = "Enqueued"
	// QueueUnitPhaseReserved holds quota and waits for its admission checks.
	QueueUnitPhaseReserved QueueUnitPhase = "Reserved"
	// QueueUnitPhaseDequeued is admitted: the job may start its pods.
	QueueUnitPhaseDequeued QueueUnitPhase = "Dequeued"
	// QueueUnitPhaseRunning has its pods running.
	QueueUnitPhaseRunning QueueUnitPhase = "Running"
	// QueueUnitPhaseSucceed finished well.
	QueueUnitPhaseSucceed QueueUnitPhase = "Succeed"
	// QueueUnitPhaseFailed finished badly.
	QueueUnitPhaseFailed QueueUnitPhase = "Failed"
	// QueueUnitPhaseTimeoutBackoff failed a check or a timeout and waits to be
	// queued again.
	QueueUnitPhaseTimeoutBackoff QueueUnitPhase = "TimeoutBackoff"
)

// PodSet is a group of identical pods of a job.
type PodSet struct {
	// Name of the pod set, unique in the unit.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Count of pods in the set.
	// +kubebuilder:validation:Minimum=0
	Count int32 `json:"count"`
	// MinCount is the least number of pods the job can run with.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinCount *int32 `json:"minCount,omitempty"`
	// Template of the set's pods.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +optional
	Template corev1.PodTemplateSpec `json:"template,omitempty"`
}

// QueueUnitSpec is what a job asks of the queue.
//
// +kubebuilder:validation:XValidation:rule="!has(self.podSet) || self.podSet.all(p, !has(p.minCount) || p.minCount <= p.count)",message="podSet[].minCount must not exceed podSet[].count"
type QueueUnitSpec struct {
	// ConsumerRef is the job this unit stands for.
	// +kubebuilder:validation:XValidation:rule="has(self.kind) && self.kind != ''",message="consumerRef.kind must be set"
	// +kubebuilder:validation:XValidation:rule="has(self.name) && self.name != ''",message="consumerRef.name must be set"
	ConsumerRef *corev1.ObjectReference `json:"consumerRef"`
	// Priority inside the queue: higher first.
	// +optional
	Priority *int32 `json:"priority,omitempty"`
	// Queue the unit waits in. Units of a job extension get their quota's name.
	// +optional
	Queue string `json:"queue,omitempty"`
	// Resource is the unit's whole demand.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, type(self[k]) == int ? self[k] >= 0 : !self[k].startsWith('-'))",message="resource quantities must not be negative"
	Resource corev1.ResourceList `json:"resource,omitempty"`
	// PodSet lists the job's groups of pods, at most 8, names unique.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	PodSet []PodSet `json:"podSet,omitempty"`
	// PriorityClassName the priority came from.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// Request is the demand as parsed from the job.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, type(self[k]) == int ? self[k] >= 0 : !self[k].startsWith('-'))",message="request quantities must not be negative"
	Request corev1.ResourceList `json:"request,omitempty"`
	// Active false keeps the unit from being admitted and evicts it if admitted
	// (feature gate QueueUnitActive). Unset means true.
	// +optional
	Active *bool `json:"active,omitempty"`
	// MaximumExecutionTimeSeconds is the job's budget counted from its pods
	// running (feature gate MaximumExecutionTime).
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaximumExecutionTimeSeconds *int32 `json:"maximumExecutionTimeSeconds,omitempty"`
}

// AdmissionCheckStateType is an admission check's answer.
// +kubebuilder:validation:Enum=Pending;Ready;Retry;Rejected
type AdmissionCheckStateType string

const (
	// CheckStatePending has no answer yet.
	CheckStatePending AdmissionCheckStateType = "Pending"
	// CheckStateReady lets the unit go.
	CheckStateReady AdmissionCheckStateType = "Ready"
	// CheckStateRetry asks to release the reservation and try later.
	CheckStateRetry AdmissionCheckStateType = "Retry"
	// CheckStateRejected refuses this attempt.
	CheckStateRejected AdmissionCheckStateType = "Rejected"
)

// AdmissionCheckState is one check's answer for a unit.
type AdmissionCheckState struct {
	// Name of the AdmissionCheck.
	Name string `json:"name"`
	// State is the check's answer.
	State AdmissionCheckStateType `json:"state"`
	// LastTransitionTime is when State last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// Message from the check.
	// +optional
	// +kubebuilder:validation:MaxLength=8192
	Message string `json:"message,omitempty"`
}

// PodState counts a unit's pods.
type PodState struct {
	// +optional
	Running int32 `json:"running,omitempty"`
	// +optional
	Pending int32 `json:"pending,omitempty"`
}

// ReclaimState marks an admitted pod set chosen as a preemption victim.
type ReclaimState struct {
	// Replicas being reclaimed.
	Replicas int32 `json:"replicas"`
}

// Admission is what one pod set was admitted with.
type Admission struct {
	// Name of the pod set.
	Name string `json:"name"`
	// Replicas admitted.
	Replicas int32 `json:"replicas"`
	// Running replicas.
	// +optional
	Running int32 `json:"running,omitempty"`
	// Resources of one replica.
	// +optional
	Resources corev1.ResourceList `json:"resources,omitempty"`
	// ReclaimState is set when the set is being preempted.
	// +optional
	ReclaimState *ReclaimState `json:"reclaimState,omitempty"`
}

// RequeueState is the backoff bookkeeping of a unit.
type RequeueState struct {
	// Count of requeues so far.
	// +optional
	Count *int32 `json:"count,omitempty"`
	// RequeueAt is when the unit may be tried again.
	// +optional
	RequeueAt *metav1.Time `json:"requeueAt,omitempty"`
}

// ReclaimablePod counts pods of a set that no longer need quota.
type ReclaimablePod struct {
	// Name of the pod set.
	Name string `json:"name"`
	// Count of finished pods.
	// +kubebuilder:validation:Minimum=0
	Count int32 `json:"count"`
}

// QueueUnitStatus is where a unit stands.
type QueueUnitStatus struct {
	// +optional
	Phase QueueUnitPhase `json:"phase,omitempty"`
	// Attempts counts scheduling attempts.
	// +optional
	Attempts int64 `json:"attempts,omitempty"`
	// Message says, for a waiting unit, why it waits.
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	LastUpdateTime *metav1.Time `json:"lastUpdateTime,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=name
	AdmissionChecks []AdmissionCheckState `json:"admissionChecks,omitempty"`
	// +optional
	PodState *PodState `json:"podState,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=name
	Admissions []Admission `json:"admissions,omitempty"`
	// LastAllocateTime is when quota was last allocated; the reclaim protection
	// period counts from it.
	// +optional
	LastAllocateTime *metav1.Time `json:"lastAllocateTime,omitempty"`
	// Quota is the quota the unit's admission is charged to, written by the
	// scheduler at admission. While the unit holds quota it stays charged
	// there, whatever its labels say later; a new quota applies when it is
	// queued again.
	// +optional
	Quota string `json:"quota,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	RequeueState *RequeueState `json:"requeueState,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=name
	ReclaimablePods []ReclaimablePod `json:"reclaimablePods,omitempty"`
	// +optional
	AccumulatedPastExecutionTimeSeconds *int32 `json:"accumulatedPastExecutionTimeSeconds,omitempty"`
}

// Condition types of a QueueUnit, mirroring its phase.
const (
	ConditionQuotaReserved = "QuotaReserved"
	ConditionAdmitted      = "Admitted"
	ConditionPodsReady     = "PodsReady"
	ConditionFinished      = "Finished"
	ConditionEvicted       = "Evicted"
)

// Reasons of the Evicted condition and of events.
const (
	ReasonPreempted                    = "Preempted"
	ReasonDeactivated                  = "Deactivated"
	ReasonBackoffTimeout               = "BackoffTimeout"
	ReasonMaximumExecutionTimeExceeded = "MaximumExecutionTimeExceeded"
	// ReasonEvictionTimeout: an evicted unit kept its quota past the
	// scheduler's evictionTimeout, and the scheduler handed it back.
	ReasonEvictionTimeout = "EvictionTimeout"
)

// QueueUnit is one job waiting in, or admitted from, a Queue.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=qu;qus
// +kubebuilder:printcolumn:name="PHASE",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="PRIORITY",type=integer,JSONPath=`.spec.priority`
// +kubebuilder:printcolumn:name="ADMISSIONS",type=string,JSONPath=`.status.admissions`
// +kubebuilder:printcolumn:name="JOBTYPE",type=string,JSONPath=`.spec.consumerRef.kind`
type QueueUnit struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   QueueUnitSpec   `json:"spec,omitempty"`
	Status QueueUnitStatus `json:"status,omitempty"`
}

// QueueUnitList is a list of QueueUnits.
//
// +kubebuilder:object:root=true
type QueueUnitList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []QueueUnit `json:"items"`
}
