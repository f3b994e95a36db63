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

// Package chaos holds the chaos run of `make test-chaos` (and its short
// variant in `make test`): a local cluster of test/cluster with two replicas
// of each koord-queue binary, a three-level tree of ElasticQuotas, thousands
// of short batch Jobs and a schedule of faults (leaders killed and paused,
// kube-apiserver and etcd restarted, a burst of jobs), judged by the checker
// of package invariants. It runs only when KOORD_QUEUE_CHAOS is "short" or
// "full"; docs/reliability.md says what it promises and how.
package chaos
