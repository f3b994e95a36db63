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
	"fmt"
	"strings"
	"time"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// protectedReason and protectedMessage extend a refusal of a unit whose
// victims are still protected (reclaimProtectionPeriod): which units will
// make room, and when. v comes from victim selection; with no unit named
// (the look-ahead found none), only the first end of a protection is told.
func protectedReason(reason schedtypes.Reason, v schedtypes.Victims) schedtypes.Reason {
	at := v.FreeAt
	if at.IsZero() {
		at = v.RetryAt
	}
	return reason.Protected(at.Unix())
}

func protectedMessage(message string, v schedtypes.Victims) string {
	if len(v.Protected) == 0 {
		return message + fmt.Sprintf("; units that could make room are protected until %s (reclaimProtectionPeriod), then it is tried again",
			v.RetryAt.UTC().Format(time.RFC3339))
	}
	kind := "preempted"
	if v.Reclaim {
		kind = "reclaimed from the quotas that borrow above their min"
	}
	names := make([]string, 0, len(v.Protected))
	for _, h := range v.Protected {
		names = append(names, string(h.Key)+" (quota "+string(h.Quota)+")")
	}
	return message + fmt.Sprintf("; room will be %s: %s, protected until %s (reclaimProtectionPeriod)",
		kind, strings.Join(names, ", "), v.FreeAt.UTC().Format(time.RFC3339))
}

// borrowingPausedMessage is the wait of a unit whose quota would borrow while
// room is made for preemptor in the same cohort.
func borrowingPausedMessage(quotaName schedtypes.QuotaName, preemptor schedtypes.UnitKey) string {
	return fmt.Sprintf("held back: room is being made by preemption for %s, and quota %s would borrow above its min meanwhile; tried again once it is admitted",
		preemptor, quotaName)
}
