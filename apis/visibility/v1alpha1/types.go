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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of the visibility API.
const GroupName = "visibility.koord-queue.x-k8s.io"

// SchemeGroupVersion is the group and version of this package.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// Resources and the subresource this version serves.
const (
	// ResourceQueues names Queues: /queues/{name}/queueunits.
	ResourceQueues = "queues"
	// ResourceElasticQuotas names ElasticQuotas: /elasticquotas/{name}/queueunits.
	ResourceElasticQuotas = "elasticquotas"
	// SubresourceQueueUnits lists the units of a queue or a quota.
	SubresourceQueueUnits = "queueunits"
	// ResourceFeatureGates is the scheduler's feature gates: /featuregates.
	ResourceFeatureGates = "featuregates"
	// ResourceQuotas names the quotas of the scheduler's quota tree, with
	// their usage: /quotas and /quotas/{name}.
	ResourceQuotas = "quotas"
)

// Phases a request may filter on (the query parameter phase). They are the
// QueueUnit phases of scheduling.x-k8s.io/v1alpha1.
const (
	// PhaseEnqueued lists the units waiting for admission, in scheduling
	// order with their position. It is the default.
	PhaseEnqueued = "Enqueued"
	// PhaseReserved lists units holding quota while their admission checks run.
	PhaseReserved = "Reserved"
	// PhaseDequeued lists admitted units whose pods are not running yet.
	PhaseDequeued = "Dequeued"
	// PhaseRunning lists admitted units whose pods run.
	PhaseRunning = "Running"
)

// QueueUnitsOptions are the query parameters of GET .../queueunits (and of
// the queue or quota itself). They are read from a URL's query only
// (Convert_url_Values_To_v1alpha1_QueueUnitsOptions), never sent as a body.
//
// +kubebuilder:object:root=true
type QueueUnitsOptions struct {
	metav1.TypeMeta `json:",inline"`

	// Limit bounds the items returned; 0 means all. 1000 when absent.
	Limit int64 `json:"limit,omitempty"`
	// Offset is how many units to skip from the start.
	Offset int64 `json:"offset,omitempty"`
	// Phase is the phase to list (Enqueued, the default, Reserved, Dequeued
	// or Running; any case).
	Phase string `json:"phase,omitempty"`
}

// QueueUnitsSummary is the answer of GET .../queues/{name}/queueunits and
// .../elasticquotas/{name}/queueunits.
//
// +kubebuilder:object:root=true
type QueueUnitsSummary struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Phase is the phase the items are in.
	Phase string `json:"phase"`
	// Total counts every unit in Phase the caller may see, before offset and
	// limit (a tenant sees the units of the namespaces where it may list
	// QueueUnits; their positions are still those of the whole queue).
	Total int32 `json:"total"`
	// Offset is how many units were skipped from the start.
	Offset int32 `json:"offset,omitempty"`
	// Items are the units from Offset on, at most limit of them (the query
	// parameter; 1000 when absent, 0 for all). Enqueued units come in
	// scheduling order; admitted ones by allocation time.
	Items []QueueUnitSummary `json:"items"`
}

// QueueUnitSummary is one QueueUnit as the scheduler sees it.
type QueueUnitSummary struct {
	// Metadata carries name, namespace and creationTimestamp only.
	metav1.ObjectMeta `json:"metadata"`

	// Phase is the unit's phase.
	Phase string `json:"phase"`
	// Queue is the queue the unit waits in (or was admitted from).
	Queue string `json:"queue"`
	// Quota is the ElasticQuota the unit is charged to.
	Quota string `json:"quota,omitempty"`
	// Priority is the unit's priority inside its queue.
	Priority int32 `json:"priority"`
	// PositionInQueue counts from 1 in the order the queue serves its units;
	// 0 for units that no longer wait.
	PositionInQueue int32 `json:"positionInQueue"`
	// Request is what the unit asks for in all.
	Request corev1.ResourceList `json:"request,omitempty"`
	// Reason is the kind of wait, one word: the reason of the unit's
	// QuotaReserved=False condition (InsufficientQuota, WaitingInLine, ...),
	// the same text as status.message. Empty when the unit does not say yet
	// why it waits, or does not wait.
	Reason string `json:"reason,omitempty"`
	// Message says why the unit waits, for people.
	Message string `json:"message,omitempty"`
}

// FeatureGates is the answer of GET .../featuregates: the feature gates the
// serving koord-queue scheduler runs with, so that clients (the kubectl
// plugin) can tell whether a field such as QueueUnit spec.active is honoured.
//
// +kubebuilder:object:root=true
type FeatureGates struct {
	metav1.TypeMeta `json:",inline"`

	// Gates maps every gate the scheduler knows to whether it is enabled.
	Gates map[string]bool `json:"gates"`
}

// Quota is one quota of the scheduler's quota tree (an ElasticQuota, by
// name) with its usage: the answer of GET .../quotas/{name}.
//
// +kubebuilder:object:root=true
type Quota struct {
	metav1.TypeMeta `json:",inline"`
	// Metadata carries the quota's name only: the resource is cluster-scoped.
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Parent is the parent quota's name; empty under the root.
	Parent string `json:"parent,omitempty"`
	// IsParent is true for a quota with children or marked is-parent: no
	// unit is admitted to it.
	IsParent bool `json:"isParent,omitempty"`
	// QuotaNamespace is the namespace of the ElasticQuota object; empty for
	// a placeholder (a parent named by a child but not created).
	QuotaNamespace string `json:"quotaNamespace,omitempty"`
	// Resources lists, by name, every resource the quota names in min or
	// max, holds or is asked for.
	Resources []QuotaResource `json:"resources"`
	// PendingUnits counts the units waiting for the quota or one below it.
	PendingUnits int32 `json:"pendingUnits"`
	// AdmittedUnits counts the units holding the quota or one below it
	// (phases Reserved, Dequeued and Running).
	AdmittedUnits int32 `json:"admittedUnits"`
}

// QuotaResource is one resource of a quota. Amounts cover the quota and
// every quota below it.
type QuotaResource struct {
	// Name of the resource (cpu, memory, nvidia.com/gpu, ...).
	Name corev1.ResourceName `json:"name"`
	// Min is the guaranteed amount; zero when the quota names none.
	Min resource.Quantity `json:"min"`
	// Max is the limit; absent when the quota does not limit the resource.
	Max *resource.Quantity `json:"max,omitempty"`
	// Used is what admitted units hold, with what pods koord-queue does
	// not manage use.
	Used resource.Quantity `json:"used"`
	// Borrowed is the part of Used above Min.
	Borrowed resource.Quantity `json:"borrowed"`
	// Lent is the part of Min not used that other quotas may use; zero
	// when the quota does not lend (allow-lent-resource: "false").
	Lent resource.Quantity `json:"lent"`
	// Pending is what the waiting units ask for in all.
	Pending resource.Quantity `json:"pending"`
}

// QuotaList is the answer of GET .../quotas: every quota, by name.
//
// +kubebuilder:object:root=true
type QuotaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Quota `json:"items"`
}

var (
	// SchemeBuilder registers this package's types.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes, addConversionFuncs)
	// AddToScheme adds this package's types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &QueueUnitsSummary{}, &FeatureGates{}, &Quota{}, &QuotaList{}, &QueueUnitsOptions{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
