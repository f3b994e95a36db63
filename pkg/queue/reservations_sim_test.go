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

package queue

import (
	"fmt"
	"testing"
	"time"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// simClass is one class of the performance baseline's shape.
type simClass struct {
	name     string
	count    int
	cpu      int64
	run      time.Duration
	prio     int32
	interval time.Duration
}

// baselineShape plays one cohort of the performance baseline at a fifth
// (parent max 120 CPU over 6 children of max 120, each fed 70 small, 20
// medium and 10 large units on the baseline's cadence) on a fake clock
// stepped by 100 ms, with no preemption, and returns the average wait to
// admission per class. held says whether the queues hold room (opt-in).
func baselineShape(t *testing.T, held bool) map[string]time.Duration {
	specs := []quota.Spec{{Name: "p", Max: cpu(120)}}
	for c := range 6 {
		specs = append(specs, quota.Spec{Name: schedtypes.QuotaName(fmt.Sprintf("c%d", c)), Parent: "p", Max: cpu(120)})
	}
	w := newHeldWorld(t, specs...)
	for c := range 6 {
		w.m.UpsertQueue(Settings{Name: schedtypes.QueueName(fmt.Sprintf("c%d", c)), Policy: schedv1alpha1.QueuePolicyPriority, HoldRoom: held})
	}
	classes := []simClass{
		{"small", 70, 1, 200 * time.Millisecond, 50, 100 * time.Millisecond},
		{"medium", 20, 5, 500 * time.Millisecond, 100, 500 * time.Millisecond},
		{"large", 10, 20, time.Second, 200, 1200 * time.Millisecond},
	}
	created := map[string]time.Time{}
	runFor := map[string]time.Duration{}
	total := 0
	const step = 100 * time.Millisecond
	for tick := 0; tick < 20000 && len(w.when) < 6*100; tick++ {
		for _, cl := range classes {
			every := int(cl.interval / step)
			if tick%every == 0 && tick/every < cl.count {
				for c := range 6 {
					name := fmt.Sprintf("%s-%d-%d", cl.name, c, tick/every)
					q := fmt.Sprintf("c%d", c)
					w.add(schedtypes.QueueName(q), name, schedtypes.QuotaName(q), cl.prio, cl.cpu)
					created[name], runFor[name] = w.now, cl.run
					total++
				}
			}
		}
		res := w.m.Pass(w.try)
		for _, a := range res.Admitted {
			u := a.Unit
			w.running[u.Key] = running{h: schedtypes.Holding{Key: u.Key, Quota: u.Quota, Used: u.Request, Priority: u.Priority}, end: w.now.Add(runFor[u.Name])}
			w.when[u.Name] = w.now
		}
		w.tick(step)
	}
	if len(w.when) != total {
		t.Fatalf("held=%v: %d of %d units admitted", held, len(w.when), total)
	}
	sum, n := map[string]time.Duration{}, map[string]int{}
	for name, at := range w.when {
		var cl string
		for _, c := range classes {
			if len(name) > len(c.name) && name[:len(c.name)+1] == c.name+"-" {
				cl = c.name
			}
		}
		sum[cl] += at.Sub(created[name])
		n[cl]++
	}
	out := map[string]time.Duration{}
	for cl, s := range sum {
		out[cl] = s / time.Duration(n[cl])
	}
	return out
}

// On the baseline's shape, without preemption, held room cuts the large
// class's average wait to admission: lower-priority units no longer take
// every slot it waits for. The figures are logged as ratios.
func TestHeldRoomOnTheBaselineShape(t *testing.T) {
	without := baselineShape(t, false)
	with := baselineShape(t, true)
	for _, cl := range []string{"large", "medium", "small"} {
		t.Logf("%-6s avg wait to admission: without held room %6.1f s, with %6.1f s, ratio %.2f",
			cl, without[cl].Seconds(), with[cl].Seconds(), with[cl].Seconds()/without[cl].Seconds())
	}
	if with["large"] >= without["large"] {
		t.Errorf("large waits %s with held room, %s without: want shorter", with["large"], without["large"])
	}
}
