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

// Package fence keeps a replica that may have lost its leader election
// lease from writing. It wraps the lease lock leader election renews
// through, remembers when this replica last renewed it, and allows writes
// only until the renew deadline after that moment: another replica can take
// the lease only a whole lease duration after it saw the last renewal, so a
// replica paused past its lease (SIGSTOP, a long GC, a frozen VM) stops
// writing before anyone else may start, and stays stopped until it renews
// again or leader election ends the process.
//
// The check is made where nothing can delay a write any more: WrapTransport
// runs inside client-go, after its rate limiter and on every retry, right
// before a request goes on the wire, and gives each write a deadline at the
// fence's end. A write held by the rate limiter (a low --qps) past the fence
// is therefore never sent. The Lock owns the moment of the last renewal,
// under its own mutex; everything else here is stateless.
package fence
