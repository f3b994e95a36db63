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

// Package kubectlplugin is the kubectl plugin `kubectl koord-queue`
// (cmd/kubectl-koord_queue only calls NewCommand). It answers "why does my job
// wait, and what is ahead of it":
//
//	kubectl koord-queue list              pending and admitted units
//	kubectl koord-queue why KIND/NAME     one unit explained: reason, quota path, what is ahead
//	kubectl koord-queue queues            each queue with its counts and its quota's usage
//	kubectl koord-queue stop|resume UNIT  set the unit's spec.active
//	kubectl koord-queue version           the plugin's version
//	kubectl koord-queue completion SHELL  cobra's completion script
//
// Output with -o goes through kubectl's printing flags (cli-runtime's
// PrintFlags, output.go): `list` prints the visibility API's
// QueueUnitsSummary, `queues` and `why` versioned documents of the plugin.
//
// It owns no state. Each command gathers a Snapshot once: QueueUnits, Queues
// and ElasticQuotas read from the API, plus the queue order, positions and
// feature gates from the visibility API (visibility.koord-queue.x-k8s.io) when
// the cluster serves it, with its quotas, whose usage `queues` prints. Without
// it, positions come from each Queue's status.queueItemDetails (or, failing
// that, the queue's documented order), and quota usage is computed from the
// admitted units by the rule of docs/protocol.md (as `why` always does). Formatting and job-to-unit resolution are pure functions
// of a Snapshot, tested without a cluster.
package kubectlplugin
