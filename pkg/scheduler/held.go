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

package scheduler

import (
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
)

// heldFailure is the refusal of a unit that fits on its own but not beside
// the room held in its cohort for waiting units of higher priority; nil for
// any other answer. Evicting others would not help it, so it goes straight
// back to its queue. It fits on its own, so it could fit: it may hold room
// for itself against units of still lower priority. Asking more, at no
// higher priority, is refused the same way (Covering).
func heldFailure(s *framework.Status) *schedtypes.Failure {
	if s.Code != framework.Unschedulable || s.Reason.Kind != schedtypes.WaitRoomHeld {
		return nil
	}
	f := failureOf(s)
	f.Covering, f.Reserves = true, true
	return f
}
