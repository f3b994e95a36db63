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

// Package visibility is the HTTPS server of the aggregated API
// visibility.koord-queue.x-k8s.io/v1alpha1, which kube-apiserver proxies to
// through the APIService v1alpha1.visibility.koord-queue.x-k8s.io:
//
//	GET /apis/visibility.koord-queue.x-k8s.io/v1alpha1/queues/{name}/queueunits
//	GET /apis/visibility.koord-queue.x-k8s.io/v1alpha1/elasticquotas/{name}/queueunits
//	GET /apis/visibility.koord-queue.x-k8s.io/v1alpha1/quotas
//	GET /apis/visibility.koord-queue.x-k8s.io/v1alpha1/quotas/{name}
//
// the first two with the query parameters limit, offset and phase
// (visibilityv1alpha1.QueueUnitsOptions), GET .../featuregates, the
// scheduler's feature gates for clients (a list: kube-apiserver authorizes it
// as list featuregates), and, when Options.UI is set, the web view at GET
// .../ui/ (package ui), authorized as resource ui as kube-apiserver names it.
//
// It is a k8s.io/apiserver generic server without storage (no etcd): each
// resource is a REST storage (storage.go) reading the Source, and the
// generic server gives the rest as kube-apiserver has it: discovery, which
// the aggregator needs to mark the APIService Available; the OpenAPI v2 and
// v3 documents it merges (`kubectl explain`), built from the generated
// definitions (apis/visibility/openapi); content negotiation and Table
// output; API Priority and Fairness on the cluster's FlowSchemas and
// PriorityLevelConfigurations (Options.NoPriorityAndFairness falls back to a
// plain bound, beyond which requests are answered 429); health checks.
//
// kubectl conventions: GET .../queues/{name} answers what its queueunits
// subresource answers; asked with Accept application/json;as=Table;
// g=meta.k8s.io;v=v1 (what `kubectl get` sends), both answer a meta.k8s.io
// Table, so `kubectl get queues.visibility.koord-queue.x-k8s.io NAME` prints
// columns. A caller sees the units of the namespaces where it may list
// QueueUnits (all when it may list them cluster-wide), each still at its
// position in the whole queue. The quotas (one per quota of the scheduler's
// quota tree, with min, max, used, borrowed, lent and pending per resource
// and counts of pending and admitted units) are sums with no unit names:
// whoever may list (or get) quotas.visibility.koord-queue.x-k8s.io sees every
// quota.
//
// It owns no scheduling state. It reads the scheduler's memory through the
// small Source interface (FromScheduler adapts the scheduler's read-only
// view, pkg/view), and owns only its listener, its serving certificate
// (tls.crt and tls.key, served anew whenever the files change, so a rotated
// Secret needs no restart) and the delegated authentication and authorization
// machinery (requests are authenticated from the front-proxy headers, client
// certificates or by TokenReview, and authorized by SubjectAccessReview, both
// answered by kube-apiserver; without credentials a request is
// system:anonymous, which may read the health paths only).
//
// Consistency: the server runs on every replica, leader or not. The pending
// queues of every replica are fed by the same informers (units, queues,
// quotas); only the leader admits. A follower therefore shows exactly what the
// API says (units leave its queues when their Reserved status arrives), and the
// leader shows the same a status write earlier; quota usage likewise, since
// every replica charges its quota tree with the admitted units it reads. The reason a unit waits is the
// unit's status.message, which the leader writes and every replica reads from
// its informer cache, so all replicas give the same answer up to watch latency.
// A follower says so: its answers carry a Warning header (299, FollowerWarning).
// Until a replica's caches have synced, the reads of its memory answer 503
// ServiceUnavailable naming what is not read yet (Replica), since an empty
// list would be wrong rather than late; discovery and OpenAPI keep answering.
package visibility
