// Package v1alpha1 is koord-queue's own copy of the ElasticQuota type of
// scheduling.sigs.k8s.io/v1alpha1, as Koordinator serves it (namespaced, no
// status subresource). Neither Koordinator's nor scheduler-plugins' Go module is
// available, so the project carries this small type and its CRD for tests and
// for clusters without Koordinator.
//
// +kubebuilder:object:generate=true
// +groupName=scheduling.sigs.k8s.io
package v1alpha1
