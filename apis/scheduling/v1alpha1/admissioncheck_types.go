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

// AdmissionCheckParametersReference points at an object holding a check's
// parameters, such as a ProvisioningRequestConfig.
type AdmissionCheckParametersReference struct {
	// APIGroup of the referenced object.
	// +kubebuilder:validation:MaxLength=253
	APIGroup string `json:"apiGroup"`
	// Kind of the referenced object.
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
	// Name of the referenced object.
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
}

// AdmissionCheckSpec describes an external check.
type AdmissionCheckSpec struct {
	// ControllerName identifies the controller that answers this check.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="controllerName is immutable"
	ControllerName string `json:"controllerName"`
	// RetryDelayMinutes is how long a unit waits after a Retry answer before it
	// is tried again.
	// +kubebuilder:default=15
	// +kubebuilder:validation:Minimum=0
	// +optional
	RetryDelayMinutes *int64 `json:"retryDelayMinutes,omitempty"`
	// Parameters of the check.
	// +optional
	Parameters *AdmissionCheckParametersReference `json:"parameters,omitempty"`
}

// AdmissionCheckStatus is written by the check's controller.
type AdmissionCheckStatus struct {
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// AdmissionCheck is an external check that a Queue can require.
//
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="CONTROLLER",type=string,JSONPath=`.spec.controllerName`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type AdmissionCheck struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AdmissionCheckSpec   `json:"spec,omitempty"`
	Status AdmissionCheckStatus `json:"status,omitempty"`
}

// AdmissionCheckList is a list of AdmissionChecks.
//
// +kubebuilder:object:root=true
type AdmissionCheckList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AdmissionCheck `json:"items"`
}

// ProvisioningRequestConfigSpec configures the ProvisioningRequests that a
// provisioning admission check creates.
type ProvisioningRequestConfigSpec struct {
	// ProvisioningClassName of the ProvisioningRequests.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ProvisioningClassName string `json:"provisioningClassName"`
	// Parameters passed to the provisioning class.
	// +optional
	// +kubebuilder:validation:MaxProperties=100
	Parameters map[string]string `json:"parameters,omitempty"`
	// ManagedResources are the resources the provisioning class provides; empty
	// means all.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=100
	ManagedResources []corev1.ResourceName `json:"managedResources,omitempty"`
}

// ProvisioningRequestConfig holds the parameters of a provisioning check.
//
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
type ProvisioningRequestConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ProvisioningRequestConfigSpec `json:"spec,omitempty"`
}

// ProvisioningRequestConfigList is a list of ProvisioningRequestConfigs.
//
// +kubebuilder:object:root=true
type ProvisioningRequestConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProvisioningRequestConfig `json:"items"`
}
