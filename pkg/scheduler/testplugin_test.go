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
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
)

// testPlugin is the one plugin of these tests. It maps a unit to the queue
// and quota its quota label names (else spec.queue), admits a unit while its
// quota's capacity covers what the quota's units hold plus the request,
// records what the scheduler tells it, and answers a victim search with what
// the test set.
type testPlugin struct {
	h framework.Handle

	mu       sync.Mutex
	capacity map[schedtypes.QuotaName]schedtypes.Resources
	cohorts  map[schedtypes.QuotaName]schedtypes.CohortName
	charged  map[schedtypes.UnitKey]schedtypes.Holding
	// usage is every SetUsage call, in order (a copy of the holding).
	usage      []usageCall
	reserves   []schedtypes.UnitKey
	unreserves []schedtypes.UnitKey
	// preempt answers victim searches (nil: none); preempts lists them, with
	// what they allowed.
	preempt  func(u *framework.UnitInfo, skip func(schedtypes.UnitKey) bool) schedtypes.Victims
	preempts []string
	// borrows lists the quotas whose units would borrow above their min.
	borrows map[schedtypes.QuotaName]bool
	// filtered counts the Filter calls by unit.
	filtered map[schedtypes.UnitKey]int
}

type usageCall struct {
	key schedtypes.UnitKey
	h   *schedtypes.Holding
}

var (
	_ framework.QueueMapPlugin = (*testPlugin)(nil)
	_ framework.FilterPlugin   = (*testPlugin)(nil)
	_ framework.ReservePlugin  = (*testPlugin)(nil)
	_ framework.UsagePlugin    = (*testPlugin)(nil)
	_ framework.PreemptPlugin  = (*testPlugin)(nil)
	_ framework.QuotaLister    = (*testPlugin)(nil)
)

func newTestPlugin() *testPlugin {
	return &testPlugin{capacity: map[schedtypes.QuotaName]schedtypes.Resources{}, cohorts: map[schedtypes.QuotaName]schedtypes.CohortName{},
		charged: map[schedtypes.UnitKey]schedtypes.Holding{}, borrows: map[schedtypes.QuotaName]bool{}}
}

func (p *testPlugin) Name() string { return "Test" }

// registry registers p as plugin Test.
func (p *testPlugin) registry() framework.Registry {
	return framework.Registry{"Test": func(_ runtime.RawExtension, h framework.Handle) (framework.Plugin, error) {
		p.h = h
		return p, nil
	}}
}

func (p *testPlugin) Map(u *schedv1alpha1.QueueUnit) (schedtypes.QueueName, schedtypes.QuotaName) {
	name := u.Labels[schedv1alpha1.QuotaNameLabel]
	if name == "" {
		name = u.Spec.Queue
	}
	return schedtypes.QueueName(name), schedtypes.QuotaName(name)
}

func (p *testPlugin) Cohort(quotaName schedtypes.QuotaName) schedtypes.CohortName {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.cohorts[quotaName]; ok {
		return c
	}
	return schedtypes.CohortName(quotaName)
}

// setCapacity makes quota name admit units up to cpu (in cores).
func (p *testPlugin) setCapacity(name schedtypes.QuotaName, cpuCores int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.capacity[name] = schedtypes.Resources{"cpu": cpuCores * 1000}
}

func (p *testPlugin) usedLocked(quotaName schedtypes.QuotaName, except schedtypes.UnitKey) schedtypes.Resources {
	used := schedtypes.Resources{}
	for key, h := range p.charged {
		if key != except && h.Quota == quotaName {
			used = used.Add(h.Used)
		}
	}
	return used
}

func (p *testPlugin) fitLocked(u *framework.UnitInfo) *framework.Status {
	capacity, ok := p.capacity[u.Quota]
	if !ok {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, schedtypes.Reason{Kind: schedtypes.WaitQuotaNotFound, Subject: string(u.Quota)}, "ElasticQuota "+string(u.Quota)+" not found")
	}
	used := p.usedLocked(u.Quota, u.Key)
	for _, r := range u.Request.Names() {
		if u.Request[r] > capacity[r] {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, schedtypes.Reason{Kind: schedtypes.WaitNeverFits, Subject: string(u.Quota), Detail: string(r)},
				fmt.Sprintf("can never fit: quota %s allows at most %d %s", u.Quota, capacity[r], r))
		}
		if free := capacity[r] - used[r]; u.Request[r] > free {
			return framework.NewStatus(framework.Unschedulable, schedtypes.Reason{Kind: schedtypes.WaitInsufficientQuota, Subject: string(u.Quota), Detail: string(r)},
				fmt.Sprintf("insufficient quota: quota %s has %d %s free, the unit requests %d", u.Quota, free, r, u.Request[r]))
		}
	}
	return nil
}

func (p *testPlugin) Filter(_ context.Context, u *framework.UnitInfo) *framework.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.filtered == nil {
		p.filtered = map[schedtypes.UnitKey]int{}
	}
	p.filtered[u.Key]++
	return p.fitLocked(u)
}

func (p *testPlugin) Reserve(_ context.Context, u *framework.UnitInfo) *framework.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.fitLocked(u); s != nil {
		return s
	}
	p.reserves = append(p.reserves, u.Key)
	p.charged[u.Key] = schedtypes.Holding{Key: u.Key, Quota: u.Quota, Used: u.Request, Priority: u.Priority}
	return nil
}

func (p *testPlugin) Unreserve(_ context.Context, u *framework.UnitInfo) {
	p.mu.Lock()
	p.unreserves = append(p.unreserves, u.Key)
	delete(p.charged, u.Key)
	p.mu.Unlock()
	p.h.Freed(p.Cohort(u.Quota))
}

func (p *testPlugin) SetUsage(key schedtypes.UnitKey, h *schedtypes.Holding) {
	p.mu.Lock()
	call := usageCall{key: key}
	if h != nil {
		cp := *h
		call.h = &cp
	}
	p.usage = append(p.usage, call)
	prev, had := p.charged[key]
	if h == nil || h.Used.IsZero() {
		delete(p.charged, key)
	} else {
		p.charged[key] = *h
	}
	p.mu.Unlock()
	if had && (h == nil || !h.Used.Covers(prev.Used)) {
		p.h.Freed(p.Cohort(prev.Quota))
	}
}

func (p *testPlugin) Preempt(_ context.Context, u *framework.UnitInfo, preempt, reclaim bool, skip func(schedtypes.UnitKey) bool) schedtypes.Victims {
	p.mu.Lock()
	p.preempts = append(p.preempts, fmt.Sprintf("%s preempt=%v reclaim=%v", u.Key, preempt, reclaim))
	fn := p.preempt
	p.mu.Unlock()
	if fn == nil {
		return schedtypes.Victims{}
	}
	return fn(u, skip)
}

func (p *testPlugin) WouldBorrow(u *framework.UnitInfo) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.borrows[u.Quota]
}

func (p *testPlugin) ListQuotas() []schedtypes.Info {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []schedtypes.Info
	for name, c := range p.capacity {
		out = append(out, schedtypes.Info{Name: name, Exists: true, Max: c.Clone(), Used: p.usedLocked(name, "")})
	}
	return out
}

// chargedTo returns what unit key is charged, and whether it is.
func (p *testPlugin) chargedTo(key schedtypes.UnitKey) (schedtypes.Holding, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h, ok := p.charged[key]
	return h, ok
}

// lastUsage returns the last SetUsage call for key.
func (p *testPlugin) lastUsage(key schedtypes.UnitKey) (usageCall, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.usage) - 1; i >= 0; i-- {
		if p.usage[i].key == key {
			return p.usage[i], true
		}
	}
	return usageCall{}, false
}

func (p *testPlugin) searches() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.preempts...)
}

func (p *testPlugin) counts() (reserves, unreserves, preempts int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.reserves), len(p.unreserves), len(p.preempts)
}
