// Package queueunit owns the rules of the QueueUnit protocol
// (docs/protocol.md) that more than one reader applies: which phases wait,
// hold quota or are done, and what a unit is charged. The scheduler, its
// visibility and debug views, the job extensions and the kubectl plugin read
// units by these rules, so none of them can count a unit differently.
package queueunit
