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

// Package job is the batch/v1 Job extension ("job"). It owns the mapping of a
// Job onto the queue: one pod set "main" whose count is
// min(parallelism, completions), suspension by spec.suspend, status.startTime
// as the sign a Job started, and pod counts from the Job's own status
// counters (active, ready, succeeded). Which Jobs are managed is the
// framework's rule (a quota label, or --manage-all-jobs for a Job not yet
// started or suspended).
package job
