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

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// APIVersion of the configuration files, as the user guide writes it.
const APIVersion = "scheduling.k8s.io/v1"

// Kinds of the configuration files.
const (
	KindKoordQueueConfiguration            = "KoordQueueConfiguration"
	KindKoordQueueControllersConfiguration = "KoordQueueControllersConfiguration"
)

// Plugin names a scheduler plugin to enable.
type Plugin struct {
	Name string `json:"name"`
}

// PluginConfig passes arguments to one plugin.
type PluginConfig struct {
	Name string `json:"name"`
	// Args are the plugin's own arguments.
	// +optional
	Args runtime.RawExtension `json:"args,omitempty"`
}

// KoordQueueConfiguration configures the koord-queue scheduler.
type KoordQueueConfiguration struct {
	metav1.TypeMeta `json:",inline"`

	// Plugins enabled, in order. Default: Priority, ElasticQuotaV2.
	// +optional
	Plugins []Plugin `json:"plugins,omitempty"`
	// PluginConfigs gives plugins their arguments.
	// +optional
	PluginConfigs []PluginConfig `json:"pluginConfigs,omitempty"`
	// ReclaimProtectionPeriod keeps a unit from being preempted or reclaimed for
	// this long after its quota was allocated. Default 5m. It is the default
	// of the ElasticQuotaV2 plugin's argument of the same name.
	// +optional
	ReclaimProtectionPeriod *metav1.Duration `json:"reclaimProtectionPeriod,omitempty"`
	// EnablePreemption allows preemption inside a quota for the queues that
	// opt in (koord-queue/preemption-policy: LowerPriority on the ElasticQuota,
	// or spec.preemptionPolicy of a Queue); false turns it off everywhere.
	// Queues never preempt by default. Default true.
	// +optional
	EnablePreemption *bool `json:"enablePreemption,omitempty"`
	// EnableReclaim lets a quota under its min take back what others borrowed.
	// Default true.
	// +optional
	EnableReclaim *bool `json:"enableReclaim,omitempty"`
	// AdmissionCheckTimeout is how long a reserved unit waits for its checks.
	// Default 10m.
	// +optional
	AdmissionCheckTimeout *metav1.Duration `json:"admissionCheckTimeout,omitempty"`
	// EvictionTimeout is how long an evicted unit (preempted, reclaimed,
	// deactivated, out of budget) may keep its quota before the scheduler
	// hands it back to its queue itself: a unit no job extension manages
	// would otherwise hold its quota, and keep its preemptor and the
	// borrowers of its cohort waiting, for ever. The pods of a real job that
	// still run then count as usage by pods koord-queue does not manage.
	// 0 turns it off. Default 10m.
	// +optional
	EvictionTimeout *metav1.Duration `json:"evictionTimeout,omitempty"`
	// QueueStatusUpdatePeriod is how often Queue status is refreshed. Default 10s.
	// +optional
	QueueStatusUpdatePeriod *metav1.Duration `json:"queueStatusUpdatePeriod,omitempty"`
}

// ExtensionTimeouts sets the lifecycle timeouts of one job extension.
type ExtensionTimeouts struct {
	// RunningTimeout moves a dequeued job whose pods never ran to
	// TimeoutBackoff. Zero disables it.
	// +optional
	RunningTimeout *metav1.Duration `json:"runningTimeout,omitempty"`
	// BackoffTimeout is how long a unit stays in TimeoutBackoff before it is
	// enqueued again.
	// +optional
	BackoffTimeout *metav1.Duration `json:"backoffTimeout,omitempty"`
}

// KoordQueueControllersConfiguration configures koord-queue-controllers.
type KoordQueueControllersConfiguration struct {
	metav1.TypeMeta `json:",inline"`

	// Extensions maps an extension name (job, tfjob, ...) to its timeouts.
	// +optional
	Extensions map[string]ExtensionTimeouts `json:"extensions,omitempty"`
	// Default applies to extensions not listed in Extensions.
	// +optional
	Default ExtensionTimeouts `json:"default,omitempty"`
}

// ElasticQuotaArgs are the arguments of the ElasticQuotaV2 plugin
// (pluginConfigs[].args), read strictly.
type ElasticQuotaArgs struct {
	// SharedQuotas lets a unit of any namespace use any quota. By default a
	// namespace may use the quotas in its own namespace and those that list
	// it in the annotation quota.scheduling.koordinator.sh/namespaces.
	// +optional
	SharedQuotas bool `json:"sharedQuotas,omitempty"`
	// OversellRate multiplies every quota max when deciding what fits; 1 is
	// no overselling, and it may not be below 1. Unset: the koord-queue flag
	// --oversellrate gives it (default 1).
	// +optional
	OversellRate *float64 `json:"oversellRate,omitempty"`
	// ReclaimProtectionPeriod keeps a unit from being preempted or reclaimed
	// for this long after its quota was allocated. Unset: the
	// configuration's top-level reclaimProtectionPeriod gives it (default 5m).
	// +optional
	ReclaimProtectionPeriod *metav1.Duration `json:"reclaimProtectionPeriod,omitempty"`
}
