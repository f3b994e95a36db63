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

// Package framework is the public plugin API of the koord-queue scheduler:
// small one-method interfaces (queue sort, queue mapping, filter, reserve,
// usage), the Status they return, an explicit Registry from plugin name to
// factory, and the Framework that runs the enabled plugins in order.
//
// A plugin implements Plugin plus any of the extension-point interfaces; the
// framework finds them by type assertion. Optional powers are declared
// interfaces too (PriorityMajorSorter, Syncer, Runnable). Filters, reserve
// and usage plugins may be many and run in the configuration's order; the
// roles that decide alone (sorting, mapping, preemption, fair share, listing
// quotas) go to at most one plugin, and New refuses two, naming both.
//
// The package imports no implementation: the values it exchanges with the
// plugins, the quota tree and the queues are those of pkg/schedtypes, and a
// plugin's settings are its own arguments, never the Handle's.
package framework
