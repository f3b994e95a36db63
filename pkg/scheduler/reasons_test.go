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
	"testing"
	"time"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

func TestConditionReason(t *testing.T) {
	for key, want := range map[string]string{
		"short/team-a/cpu":                        "InsufficientQuota",
		"short/team-a/cpu/protected/1767225600":   "WaitingForProtectionEnd",
		"never/team-a/cpu/4000":                   "NeverFits",
		"tree/team-a/the parent x does not exist": "InvalidQuotaTree",
		"behind/ns/a":                             "WaitingInLine",
		"highband/ns/a":                           "HighBandWaiting",
		"preemptor/ns/a":                          "RoomBeingMade",
		"borrowing-paused/ns/a":                   "RoomBeingMade",
		"preempting/team-a":                       "Preempting",
		"reserving/ns/a":                          "QuotaReservedByMaxWait",
		"held/p/ns/big":                           "RoomHeldForHigherPriority",
		"depth/q":                                 "BeyondMaxDepth",
		"waitforpods/q":                           "WaitingForPodsRunning",
		"inactive":                                "Inactive",
		"budget":                                  "ExecutionBudgetUsedUp",
		"queuenotfound":                           "QueueNotFound",
		"something-new/x":                         "Pending",
	} {
		if got := conditionReason(key); got != want {
			t.Errorf("conditionReason(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestProtectedMessage(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 5, 0, 0, time.UTC)
	base := "insufficient quota: quota p has 0 cpu free (used 4, min 0, max 4), the unit requests 2 cpu: 2 more cpu needed"
	v := schedtypes.Victims{RetryAt: at, FreeAt: at, Reclaim: true,
		Protected: []schedtypes.Holding{{Key: "ns/a-0", Quota: "a"}, {Key: "ns/c-1", Quota: "c"}}}
	want := base + "; room will be reclaimed from the quotas that borrow above their min: ns/a-0 (quota a), ns/c-1 (quota c), protected until 2026-01-01T00:05:00Z (reclaimProtectionPeriod)"
	if got := protectedMessage(base, v); got != want {
		t.Errorf("message = %q\nwant        %q", got, want)
	}
	// No unit found by looking ahead: only the first end is told.
	v = schedtypes.Victims{RetryAt: at}
	want = base + "; units that could make room are protected until 2026-01-01T00:05:00Z (reclaimProtectionPeriod), then it is tried again"
	if got := protectedMessage(base, v); got != want {
		t.Errorf("message = %q\nwant        %q", got, want)
	}
	if got, want := protectedReason("short/p/cpu", v), "short/p/cpu/protected/1767225900"; got != want {
		t.Errorf("reason = %q, want %q", got, want)
	}
}
