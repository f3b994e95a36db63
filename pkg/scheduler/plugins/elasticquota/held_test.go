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

package elasticquota

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
)

// TestFilterBesideHeldRoom checks that Filter counts the room held for
// waiting units of higher priority at the quotas it shares with them, and
// says so with a reason the scheduler tells from a plain shortage; room held
// for a unit that would borrow does not count against a unit that stays
// within its quota's min.
func TestFilterBesideHeldRoom(t *testing.T) {
	p, _ := newTestPlugin(t, nil, twoTeams()...)
	// org has 3 of its 6 CPUs free; team-a is at its min of 2, and room for
	// 3 more CPUs of team-a (borrowing) is held.
	p.SetUsage("default/x", holding(unit("x", "team-a", 0, 2), time.Time{}))
	p.SetUsage("default/y", holding(unit("y", "team-b", 0, 1), time.Time{}))
	held := []schedtypes.Reservation{{Unit: "default/big", Priority: 200, Quota: "team-a", Request: cpu(3)}}

	one := unit("one", "team-b", 50, 1)
	one.Beside = held
	if s := p.Filter(context.Background(), one); !s.IsSuccess() {
		t.Errorf("1 CPU within team-b's min, beside 3 held for a borrower, refused: %+v", s)
	}
	two := unit("two", "team-b", 50, 2)
	if s := p.Filter(context.Background(), two); !s.IsSuccess() {
		t.Fatalf("2 CPUs of 3 free refused with nothing held: %+v", s)
	}
	two.Beside = held
	s := p.Filter(context.Background(), two)
	if s == nil || s.Code != framework.Unschedulable || s.Reason != (schedtypes.Reason{Kind: schedtypes.WaitRoomHeld, Subject: "org", Detail: "default/big"}) ||
		!strings.Contains(s.Message, "waits behind default/big (priority 200") {
		t.Errorf("2 CPUs, above team-b's min, beside 3 held of 3 free: %+v, want refused naming default/big", s)
	}
}

// TestPreemptSaysWhetherWaitingCanHelp checks Victims.Reachable: true when
// the units of lower priority hold the room the unit needs, false when
// units of its own priority or higher do.
func TestPreemptSaysWhetherWaitingCanHelp(t *testing.T) {
	p, _ := newTestPlugin(t, nil, twoTeams()...)
	p.SetUsage("default/low", holding(unit("low", "team-b", 10, 4), time.Time{}))
	// team-a needs 4 of org's 6; team-b borrows 2 above its min, but reclaim
	// and preemption are off here: nobody is evicted, waiting is the way in.
	high := unit("high", "team-a", 100, 4)
	if v := p.Preempt(context.Background(), high, false, false, nil); len(v.Units) != 0 || !v.Reachable {
		t.Errorf("behind a lower unit: %+v, want no victims and Reachable", v)
	}
	peer := unit("peer", "team-a", 10, 4)
	if v := p.Preempt(context.Background(), peer, false, false, nil); v.Reachable {
		t.Errorf("behind a unit of the same priority: %+v, want not Reachable", v)
	}
}
