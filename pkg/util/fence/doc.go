// Package fence keeps a replica that may have lost its leader election
// lease from writing. It wraps the lease lock leader election renews
// through, remembers when this replica last renewed it, and allows writes
// only until the renew deadline after that moment: another replica can take
// the lease only a whole lease duration after it saw the last renewal, so a
// replica paused past its lease (SIGSTOP, a long GC, a frozen VM) stops
// writing before anyone else may start, and stays stopped until it renews
// again or leader election ends the process.
package fence
