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

// Package visibility tests the visibility aggregated API through the real
// kube-apiserver aggregation layer, as the user guide calls it:
// kubectl get --raw /apis/visibility.koord-queue.x-k8s.io/v1alpha1/queues/team-a/queueunits.
// The scheduler runs in-process with its visibility server on loopback; an
// APIService points at an ExternalName Service (localhost) so the aggregator
// reaches it without kube-proxy. It also calls the debug API.
package visibility
