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

// Package v1alpha1 holds the response types of the visibility aggregated API,
// visibility.koord-queue.x-k8s.io/v1alpha1, served by the koord-queue
// scheduler (pkg/visibility) behind an APIService. The API is read-only and
// has no storage: every answer is built from the scheduler's memory. It
// imports only apimachinery and core types.
//
// +kubebuilder:object:generate=true
// +groupName=visibility.koord-queue.x-k8s.io
// +k8s:openapi-gen=true
package v1alpha1
