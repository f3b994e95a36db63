// Package job is the batch/v1 Job extension ("job"). It owns the mapping of a
// Job onto the queue: one pod set "main" whose count is
// min(parallelism, completions), suspension by spec.suspend, status.startTime
// as the sign a Job started, and pod counts from the Job's own status
// counters (active, ready, succeeded). Which Jobs are managed is the
// framework's rule (a quota label, or --manage-all-jobs for a Job not yet
// started or suspended).
package job
