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
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// A unit refused for want of room with a Lack is not tried again until its
// cohort gave back that much (beyond what its victims hold, when it may
// preempt), its quota gave anything back, or a victim came to its quota.
// Leaving it untried must change nothing: two schedulers fed the same
// random events, one as built and one that tries every waiting unit in
// every pass (everything invalidated before each), admit the same units
// after every pass. Both run the real plugins (quota tree, victim search
// with LowerPriority preemption and reclaim) on a fake API.
func TestLackKeepsWhatIsAdmitted(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			gated := newBenchWorld(t, 3, 4, 5, benchClasses)
			everyone := newBenchWorld(t, 3, 4, 5, benchClasses)
			worlds := []*benchWorld{gated, everyone}
			rnd := rand.New(rand.NewPCG(seed, 37))
			admitted := 0
			for step := range 120 {
				// One event, the same in both worlds: a holder finishes (a
				// unit of its quota comes in its place), or a unit comes.
				finish, q := rnd.IntN(3) > 0, benchChild(rnd.IntN(gated.parents), rnd.IntN(gated.children))
				var pick int
				if n := len(gated.holders); finish && n > 0 {
					pick = rnd.IntN(n)
				}
				for _, w := range worlds {
					w.clk.Step(100 * time.Millisecond)
					if finish && len(w.holders) > 0 {
						w.s.intake.onUnit(w.finishHolder(t, pick))
					} else {
						w.newUnit(t, q)
					}
				}
				a := gated.cycle(t)
				everyone.s.env.queues.Invalidate()
				b := everyone.cycle(t)
				admitted += a
				if diff := cmp.Diff(holding(everyone), holding(gated)); diff != "" || a != b {
					t.Fatalf("step %d (finish %v, pick %d, quota %s): admitted %d as built, %d trying everyone; holders (-trying everyone +as built):\n%s\nas built:\n%s\ntrying everyone:\n%s",
						step, finish, pick, q, a, b, diff, pendingText(gated), pendingText(everyone))
				}
			}
			if admitted == 0 {
				t.Fatal("nothing admitted: the comparison proved nothing")
			}
		})
	}
}

func holding(w *benchWorld) []string { return slices.Sorted(maps.Keys(w.holding)) }

// pendingText is what a world's waiting units last heard, for a failure.
func pendingText(w *benchWorld) string {
	var out []string
	var units []*schedtypes.Unit
	for _, name := range w.s.env.queues.QueueNames() {
		pos, _ := w.s.env.queues.Pending(name)
		for _, p := range pos {
			units = append(units, p.Unit)
		}
	}
	for _, u := range units {
		f := u.Pending.Failure
		if f == nil {
			out = append(out, fmt.Sprintf("%s %s p%d %v: untried", u.Name, u.Quota, u.Priority, u.Request))
			continue
		}
		lack := ""
		if f.Recheck != nil && f.Recheck.Lack != nil {
			lack = fmt.Sprintf(" lack %d base %d", f.Recheck.Lack.Amount, u.Pending.FreedBase)
		}
		out = append(out, fmt.Sprintf("%s %s p%d %v: epoch %d%s inferred %v confirmed %v reserves %v preempting %v: %s", u.Name, u.Quota, u.Priority, u.Request, u.Pending.Epoch, lack, f.Inferred, f.Confirmed, f.Reserves, f.Preempting, f.Message))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}
