// Package e2e plays every YAML example of the user guide (test/testdata/guide)
// on a local cluster of real processes (package test/cluster) running both
// koord-queue binaries: TestMain starts a fresh cluster on free ports in a
// temporary state directory and stops it at the end. A missing tool or binary
// fails the suite; nothing is skipped.
//
// Pods run on kwok's fake nodes for podRunTime (the cluster's default stage
// delay), so the guide's Jobs are applied exactly as written. Assertions poll;
// the few "stays so" checks watch for a bounded time.
package e2e
