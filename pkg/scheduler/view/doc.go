// Package view declares what the read-only APIs (pkg/visibility,
// pkg/debugapi) may see of the scheduler: copies of its pending queues and
// quotas, taken under the scheduler's own locks, never its live objects.
// pkg/scheduler implements Reader (Scheduler.View).
package view
