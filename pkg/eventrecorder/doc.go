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

// Package eventrecorder writes the Kubernetes Events of both binaries.
//
// It owns the events recorded but not yet written: a map of pending events
// and their order, under one lock, and the workers that write them with a
// client of their own (its own QPS budget, apart from the one that writes
// QueueUnit status).
//
// Why not client-go's broadcasters: under load (15,000 units at QPS 50-100)
// record.EventBroadcaster dropped most Scheduled events without a trace.
// Its queue of 1,000 drops when full, its sink waits on the caller's client
// rate limit, and its spam filter and aggregation drop or merge more. The
// events.k8s.io/v1 broadcaster of tools/events writes a series' count only
// minutes later, and its events leave lastTimestamp empty, which the user
// guide's debugging command shows.
//
// So this recorder writes core/v1 Events itself:
//   - an event identical to one still waiting (same object, type, reason,
//     action and message) raises that one's count instead of queueing a
//     second write, so a burst costs writes per distinct event, and every
//     recorded event is counted in some Event's count;
//   - nothing is dropped while fewer than MaxPending distinct events wait;
//     beyond that, and for events the API server refuses for good or that
//     are still waiting when the binary stops, the loss is counted in
//     koord_queue_events_dropped_total{cause} and logged. Nothing is lost
//     silently.
package eventrecorder
