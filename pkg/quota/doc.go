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

// Package quota owns the ElasticQuota tree and its usage accounting, as pure
// logic with no client: quotas with min and max, parent links (a quota without
// one is a child of the root, koordinator-root-quota), and what admitted units
// use. A unit is charged to its leaf quota and every ancestor; it fits when, at
// each of them, used + request <= max x oversell for every resource that
// quota's max names. CPU is counted in milli-units, everything else in units.
//
// Two readers of the tree live beside it as types of their own: the
// VictimSelector (victims.go) chooses whose eviction makes room for a unit,
// and HeldRoom (reserve.go) judges a request against the room held for
// waiting units of higher priority.
//
// A Tree is not safe for concurrent use; its owner (the ElasticQuotaV2 plugin)
// guards it, and its readers, with one lock.
package quota
