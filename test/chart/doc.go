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

// Package chart tests the Helm chart charts/koord-queue: helm lint and helm
// template over several value sets with assertions on the rendered objects,
// the drift check of hack/verify-chart.sh, a server-side apply of the rendered
// manifests to a real kube-apiserver (envtest) with each ServiceAccount's RBAC
// proven there by impersonation, and koord-queue plus koord-queue-controllers
// run as the chart's ServiceAccounts admitting a job; and a helm upgrade from
// a release of a v1.8-shaped chart (test/upgrade/testdata) that keeps every
// Queue, QueueUnit and running job.
//
// helm and kubectl come from HELM and KUBECTL, else from the folder
// `hack/tools.sh dir` prints; etcd and kube-apiserver from KUBEBUILDER_ASSETS.
// A missing tool fails the tests: run them with `make test-chart`.
package chart
