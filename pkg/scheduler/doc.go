// Package scheduler is the admission loop of koord-queue. It owns the cache of
// QueueUnits (what each holds, what is in flight), feeds pending units to the
// queue manager (pkg/queue), runs passes that admit units through the plugin
// framework, and writes the results asynchronously through one status writer.
//
// A decision is made from memory: the admitted unit's quota is charged at once
// (assumed) and the unit leaves the pending queues, so it can never be admitted
// twice while its status write is in flight. A failed write gives the quota
// back and the unit is decided again. Usage is always rebuilt from the API
// (see docs/protocol.md), so a restarted scheduler starts from the truth.
//
// Every waiting unit says why in its status (message and a QuotaReserved=False
// condition, reasons.go): texts name what stays put while others are
// admitted, and a unit is written only when its reason changes.
//
// Time is the scheduler's injected Clock: every deadline (the end of a
// protection period, admission check timeouts, backoff ends, execution
// budgets) schedules its own re-evaluation on it (wakeups, the lifecycle
// queue), so nothing waits for an unrelated change. The nodes it knows, for
// the node fit check (pkg/nodefit), have an owner of their own (nodes).
//
// Locks, in the order they may be taken: the queue manager's (a pass calls
// try under it), then s.mu, then the plugins' and the leaf locks (nodes,
// wakeups, the status writer's), none of which calls back.
package scheduler
