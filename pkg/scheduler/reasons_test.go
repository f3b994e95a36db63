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

// TestConditionReason checks the condition reason each wait the scheduler
// reports carries; a protected wait reads WaitingForProtectionEnd whatever
// its kind.
func TestConditionReason(t *testing.T) {
	for _, c := range []struct {
		reason schedtypes.Reason
		want   string
	}{
		{schedtypes.Reason{Kind: schedtypes.WaitInsufficientQuota, Subject: "team-a", Detail: "cpu"}, "InsufficientQuota"},
		{schedtypes.Reason{Kind: schedtypes.WaitInsufficientQuota, Subject: "team-a", Detail: "cpu", ProtectedUntil: 1767225600}, "WaitingForProtectionEnd"},
		{schedtypes.Reason{Kind: schedtypes.WaitNeverFits, Subject: "team-a", Detail: "cpu", Number: 4000}, "NeverFits"},
		{schedtypes.Reason{Kind: schedtypes.WaitInvalidQuotaTree, Subject: "team-a", Detail: "the parent x does not exist"}, "InvalidQuotaTree"},
		{schedtypes.Reason{Kind: schedtypes.WaitBehind, Subject: "ns/a"}, "WaitingInLine"},
		{schedtypes.Reason{Kind: schedtypes.WaitHighBand, Subject: "ns/a"}, "HighBandWaiting"},
		{schedtypes.Reason{Kind: schedtypes.WaitPreemptor, Subject: "ns/a"}, "RoomBeingMade"},
		{schedtypes.Reason{Kind: schedtypes.WaitBorrowingPaused, Subject: "ns/a"}, "RoomBeingMade"},
		{schedtypes.Reason{Kind: schedtypes.WaitPreempting, Subject: "team-a"}, "Preempting"},
		{schedtypes.Reason{Kind: schedtypes.WaitReserving, Subject: "ns/a"}, "QuotaReservedByMaxWait"},
		{schedtypes.Reason{Kind: schedtypes.WaitInsufficientQuota, Subject: "team-a", Detail: "cpu", Reserving: true}, "InsufficientQuota"},
		{schedtypes.Reason{Kind: schedtypes.WaitRoomHeld, Subject: "p", Detail: "ns/big"}, "RoomHeldForHigherPriority"},
		{schedtypes.Reason{Kind: schedtypes.WaitBeyondMaxDepth, Subject: "q"}, "BeyondMaxDepth"},
		{schedtypes.Reason{Kind: schedtypes.WaitForPods, Subject: "q"}, "WaitingForPodsRunning"},
		{schedtypes.Reason{Kind: schedtypes.WaitInactive}, "Inactive"},
		{schedtypes.Reason{Kind: schedtypes.WaitBudgetUsedUp}, "ExecutionBudgetUsedUp"},
		{schedtypes.Reason{Kind: schedtypes.WaitQueueNotFound}, "QueueNotFound"},
		{schedtypes.Reason{Kind: schedtypes.WaitNoQuota}, "NoQuota"},
		{schedtypes.Reason{Subject: "a plugin's own"}, "Pending"},
	} {
		if got := c.reason.Condition(); got != c.want {
			t.Errorf("%v: condition reason %q, want %q", c.reason, got, c.want)
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
	short := schedtypes.Reason{Kind: schedtypes.WaitInsufficientQuota, Subject: "p", Detail: "cpu"}
	if got, want := protectedReason(short, v), short.Protected(1767225900); got != want {
		t.Errorf("reason = %v, want %v", got, want)
	}
}
