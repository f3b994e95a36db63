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

// Package election takes, keeps and gives back a replica's Lease, and holds
// the leader's work until the Lease is taken. It owns the leader election
// of both binaries in place of client-go's elector, for one reason: a standby
// here watches the Lease and tries to take it at the moment the lease it
// observed last runs out (a deadline it schedules), where client-go's elector
// polls at a jittered period (up to 2.2 retry periods) both to observe the
// holder's renewals and to try again, so a failover took a lease plus up to
// two of those periods.
//
// The rules are client-go's: a lease is expired a whole lease duration
// after this replica observed its last change (its own clock, never the
// renewTime another replica wrote), the leader renews every retry period
// and gives up (Start returns an error, the process ends) when no renewal
// succeeded for the renew deadline, and a stopping leader gives the Lease
// back once the work it held has returned. Every write goes through the
// fenced lock (pkg/util/fence), which keeps counting this replica's
// renewals for its write fence.
//
// Gate wraps a controller-runtime manager so that every runnable the
// manager would have run only on the leader waits for this replica's
// election instead.
package election
