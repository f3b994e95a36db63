// Package v1alpha1 holds the response types of the visibility aggregated API,
// visibility.koord-queue.x-k8s.io/v1alpha1, served by the koord-queue
// scheduler (pkg/visibility) behind an APIService. The API is read-only and
// has no storage: every answer is built from the scheduler's memory. It
// imports only apimachinery and core types.
//
// +kubebuilder:object:generate=true
// +groupName=visibility.koord-queue.x-k8s.io
package v1alpha1
