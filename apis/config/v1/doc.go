// Package v1 holds the component configuration files of koord-queue: the queue
// scheduler's KoordQueueConfiguration and the job extensions'
// KoordQueueControllersConfiguration, with their defaults and validation.
// They are files, not served APIs, and are read strictly: an unknown field is an
// error that names it.
//
// +kubebuilder:object:generate=true
package v1
