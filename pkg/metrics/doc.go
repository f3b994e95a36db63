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

// Package metrics defines every Prometheus metric of the koord-queue
// scheduler, once. Counters and histograms are updated where things happen
// (through the Recorder, injected into the scheduler); gauges are computed at
// scrape time from the scheduler's state (through a State), so they are never
// stale and cost nothing between scrapes. Only the leader reports them (a
// follower's State is empty), so sums over replicas do not double.
//
// The unprefixed names are the ones existing dashboards use; names added by
// this project start with koord_queue_. koord_queue_build_info is exported by
// both binaries: the scheduler through Register, the job extensions through
// RegisterBuildInfo.
package metrics
