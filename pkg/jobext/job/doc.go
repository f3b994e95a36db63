// Package job is the batch/v1 Job extension ("job"). It owns the mapping of a
// Job onto the queue: the takeover rule (spec.suspend true and no
// status.startTime), one pod set "main" whose count is
// min(parallelism, completions), suspension by spec.suspend, and pod counts
// from the Job's own status counters (active, ready, succeeded).
package job
