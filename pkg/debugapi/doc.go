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

// Package debugapi is koord-queue's optional debug HTTP API (flag
// --enableApiHandler, off by default, on 127.0.0.1:10260 by default): plain
// HTTP, no authentication, JSON dumps of the scheduler's memory for people
// debugging one replica.
//
//	GET /debug/quotas          the quota tree: min, max and used of every quota
//	GET /debug/queues          every queue's settings and pending count, and
//	                           units whose queue does not exist
//	GET /debug/queues/{name}   one queue's settings and its pending units in
//	                           scheduling order, with why each waits
//
// It owns nothing but its listener: it reads through the Source interface
// (FromScheduler adapts the scheduler's read-only view, pkg/view).
// Answers describe the replica that is asked; only the leader admits, so a
// follower's queues hold what the API says and the leader's the same a
// status write earlier. The waiting
// reason is the unit's status.message as the leader last wrote it.
//
// The API is for people and may change; the stable API is the visibility
// aggregated API (pkg/visibility).
package debugapi
