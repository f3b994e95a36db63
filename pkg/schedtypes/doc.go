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

// Package schedtypes holds the plain values the scheduler's plugin API
// (pkg/scheduler/framework), its plugins, the quota tree (pkg/quota) and the
// pending queues (pkg/queue) hand each other: amounts of resources, what an
// admitted unit holds, the victims of a preemption, a view of one quota, a
// pending unit, and why a unit waits (Reason, with the one table from its
// kind to the condition reason, message and remedy users see).
//
// Names are typed so that one kind cannot be passed for another: UnitKey
// ("namespace/name" of a QueueUnit), QueueName, QuotaName and CohortName.
// They become plain strings only at the edges: API objects, labels, log and
// event text, metric labels and the JSON of the visibility and debug APIs.
//
// It sits below all of them so that the framework need import no
// implementation: it has no logic beyond conversions and simple methods on
// its values, and imports nothing of ours but pkg/util/resources. Each type
// has this one name: no other package keeps an alias of it.
package schedtypes
