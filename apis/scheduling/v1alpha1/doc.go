// Package v1alpha1 holds the scheduling.x-k8s.io/v1alpha1 API of koord-queue:
// Queue, QueueUnit, AdmissionCheck and ProvisioningRequestConfig. It imports only
// apimachinery and core types; behaviour lives in pkg/.
//
// +kubebuilder:object:generate=true
// +groupName=scheduling.x-k8s.io
package v1alpha1
