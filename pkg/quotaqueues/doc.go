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

// Package quotaqueues is the controller that keeps one Queue per ElasticQuota
// in namespace koord-queue: same name, priority 1000, the policy of the
// quota's koord-queue/queue-policy label (Priority without one), and the
// quota's koord-queue/* annotations copied. It owns those Queues' spec
// policy and their copied annotations, and creates the namespace; a Queue
// written by hand (without the created-by label) is left alone.
//
// It runs on the leader only, and writes through the client it is given,
// which on a leader is the fenced one (pkg/util/fence, docs/protocol.md).
// Of two ElasticQuotas of one name it follows the one the ElasticQuota
// plugin follows (quota.SameNames). It only writes Queues: the plugin reads
// the quotas and says what is wrong with them.
package quotaqueues
