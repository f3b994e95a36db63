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

package framework

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
)

// Framework runs the enabled plugins.
type Framework struct {
	plugins   []Plugin
	sorter    QueueSortPlugin
	mapper    QueueMapPlugin
	filters   []FilterPlugin
	reservers []ReservePlugin
	usages    []UsagePlugin
	preempter PreemptPlugin
	// refusals is the preemption plugin as a RefusalChecker, nil when it is
	// not one: asked once per try, so resolved once here.
	refusals  RefusalChecker
	sharer    SharePlugin
	lister    QuotaLister
	syncers   []Syncer
	runnables []Runnable
	// owners names the plugin that holds each role only one may hold.
	owners map[string]string
	// names shares the queue and quota names Map hands out.
	names schedtypes.Interner
}

// Roles only one enabled plugin may hold, as start errors word them.
const (
	roleSort    = "sort queues"
	roleMap     = "map units to queues"
	rolePreempt = "choose preemption victims"
	roleShare   = "order queues by fair share"
	roleList    = "list quotas"
)

// New builds the plugins the configuration enables, in its order. It refuses
// an unknown plugin, a factory's error, and two plugins taking a role only
// one may hold (sorting, mapping, preemption, fair share, listing quotas),
// naming both.
func New(cfg *configv1.KoordQueueConfiguration, registry Registry, h Handle) (*Framework, error) {
	args := map[string]configv1.PluginConfig{}
	for _, pc := range cfg.PluginConfigs {
		args[pc.Name] = pc
	}
	f := &Framework{owners: map[string]string{}}
	for _, p := range cfg.Plugins {
		plugin, err := build(registry, p.Name, args[p.Name].Args, h)
		if err != nil {
			return nil, err
		}
		if err := add(f, plugin); err != nil {
			return nil, err
		}
	}
	if f.mapper == nil {
		return nil, fmt.Errorf("no enabled plugin maps units to queues: enable %s", configv1.PluginElasticQuotaV2)
	}
	return f, nil
}

// build runs the factory registered under name.
func build(registry Registry, name string, args runtime.RawExtension, h Handle) (Plugin, error) {
	factory, ok := registry[name]
	if !ok {
		known := slices.Sorted(maps.Keys(registry))
		return nil, fmt.Errorf("plugin %q is not registered (known: %s)", name, strings.Join(known, ", "))
	}
	plugin, err := factory(args, h)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", name, err)
	}
	if plugin == nil {
		return nil, fmt.Errorf("plugin %s: its factory built nothing", name)
	}
	if plugin.Name() != name {
		return nil, fmt.Errorf("plugin %s: its factory built a plugin named %q", name, plugin.Name())
	}
	return plugin, nil
}

// add files a plugin under every extension point it implements (a
// function, not a method: only New builds a Framework).
func add(f *Framework, plugin Plugin) error {
	f.plugins = append(f.plugins, plugin)
	if x, ok := plugin.(QueueSortPlugin); ok {
		if err := claim(f, roleSort, plugin); err != nil {
			return err
		}
		f.sorter = x
	}
	if x, ok := plugin.(QueueMapPlugin); ok {
		if err := claim(f, roleMap, plugin); err != nil {
			return err
		}
		f.mapper = x
	}
	if x, ok := plugin.(PreemptPlugin); ok {
		if err := claim(f, rolePreempt, plugin); err != nil {
			return err
		}
		f.preempter = x
		f.refusals, _ = plugin.(RefusalChecker)
	}
	if x, ok := plugin.(SharePlugin); ok {
		if err := claim(f, roleShare, plugin); err != nil {
			return err
		}
		f.sharer = x
	}
	if x, ok := plugin.(QuotaLister); ok {
		if err := claim(f, roleList, plugin); err != nil {
			return err
		}
		f.lister = x
	}
	// Any number of these: each runs in turn.
	if x, ok := plugin.(FilterPlugin); ok {
		f.filters = append(f.filters, x)
	}
	if x, ok := plugin.(ReservePlugin); ok {
		f.reservers = append(f.reservers, x)
	}
	if x, ok := plugin.(UsagePlugin); ok {
		f.usages = append(f.usages, x)
	}
	if x, ok := plugin.(Syncer); ok {
		f.syncers = append(f.syncers, x)
	}
	if x, ok := plugin.(Runnable); ok {
		f.runnables = append(f.runnables, x)
	}
	return nil
}

// claim gives a role in f to plugin, unless another plugin holds it already.
func claim(f *Framework, role string, plugin Plugin) error {
	if prev, ok := f.owners[role]; ok {
		return fmt.Errorf("plugins %s and %s both %s; enable one", prev, plugin.Name(), role)
	}
	f.owners[role] = plugin.Name()
	return nil
}

// Less orders units; without a sort plugin it is nil, which the queues
// read as their default order (priority, then creation time).
func (f *Framework) Less() schedtypes.Less {
	if f.sorter == nil {
		return nil
	}
	less := f.sorter.Less
	return func(a, b *schedtypes.Unit) bool { return less(sortUnit(a), sortUnit(b)) }
}

// sortUnit is the copy of u a sort plugin sees (by value: no allocation).
func sortUnit(u *schedtypes.Unit) SortUnit {
	return SortUnit{Namespace: u.Namespace, Name: u.Name, Priority: u.Priority, Created: u.Created, Quota: u.Quota}
}

// PriorityMajor reports whether Less orders by priority before anything
// else: without a sort plugin, or when it is a PriorityMajorSorter that says
// so.
func (f *Framework) PriorityMajor() bool {
	if f.sorter == nil {
		return true
	}
	pm, ok := f.sorter.(PriorityMajorSorter)
	return ok && pm.PriorityMajor()
}

// Map returns the unit's queue and quota, each one copy shared by every
// unit that names it.
func (f *Framework) Map(u *schedv1alpha1.QueueUnit) (schedtypes.QueueName, schedtypes.QuotaName) {
	queueName, quotaName := f.mapper.Map(u)
	return schedtypes.QueueName(f.names.Intern(string(queueName))), schedtypes.QuotaName(f.names.Intern(string(quotaName)))
}

// Cohort returns the cohort of a quota.
func (f *Framework) Cohort(quotaName schedtypes.QuotaName) schedtypes.CohortName {
	return f.mapper.Cohort(quotaName)
}

// Filter runs every filter; the first that refuses answers.
func (f *Framework) Filter(ctx context.Context, u *UnitInfo) *Status {
	for _, p := range f.filters {
		if s := p.Filter(ctx, u); !s.IsSuccess() {
			return s
		}
	}
	return nil
}

// Reserve runs every reserve plugin; if one refuses, those before it are undone.
func (f *Framework) Reserve(ctx context.Context, u *UnitInfo) *Status {
	for i, p := range f.reservers {
		if s := p.Reserve(ctx, u); !s.IsSuccess() {
			for j := i - 1; j >= 0; j-- {
				f.reservers[j].Unreserve(ctx, u)
			}
			return s
		}
	}
	return nil
}

// Unreserve undoes Reserve.
func (f *Framework) Unreserve(ctx context.Context, u *UnitInfo) {
	for i := len(f.reservers) - 1; i >= 0; i-- {
		f.reservers[i].Unreserve(ctx, u)
	}
}

// SetUsage tells usage plugins what a unit holds.
func (f *Framework) SetUsage(key schedtypes.UnitKey, h *schedtypes.Holding) {
	for _, p := range f.usages {
		p.SetUsage(key, h)
	}
}

// UnitGone tells usage plugins that a unit was deleted from the API (see
// GoneUsagePlugin).
func (f *Framework) UnitGone(key schedtypes.UnitKey) {
	for _, p := range f.usages {
		if g, ok := p.(GoneUsagePlugin); ok {
			g.UnitGone(key)
			continue
		}
		p.SetUsage(key, nil)
	}
}

// Preempt asks the preemption plugin, if one is enabled, for victims.
func (f *Framework) Preempt(ctx context.Context, u *UnitInfo, preempt, reclaim bool, skip func(schedtypes.UnitKey) bool) schedtypes.Victims {
	if f.preempter == nil || (!preempt && !reclaim) {
		return schedtypes.Victims{}
	}
	return f.preempter.Preempt(ctx, u, preempt, reclaim, skip)
}

// RefusalMark is the preemption plugin's Recheck of a refusal of u decided
// now, nil when it cannot confirm refusals (see RefusalChecker).
func (f *Framework) RefusalMark(u *UnitInfo, preempt, reclaim bool) *schedtypes.Recheck {
	if f.refusals == nil {
		return nil
	}
	return f.refusals.RefusalMark(u, preempt, reclaim)
}

// StillRefused asks the preemption plugin whether u, refused with reason
// under mark, is refused the same way now, and returns its Recheck then
// (see RefusalChecker); nil otherwise.
func (f *Framework) StillRefused(u *UnitInfo, mark *schedtypes.Recheck, reason schedtypes.Reason, reclaim bool) *schedtypes.Recheck {
	if f.refusals == nil || mark == nil {
		return nil
	}
	return f.refusals.StillRefused(u, mark, reason, reclaim)
}

// HasSynced reports whether every plugin with informers has seen them all.
func (f *Framework) HasSynced() bool {
	for _, s := range f.syncers {
		if !s.HasSynced() {
			return false
		}
	}
	return true
}

// WouldBorrow asks the preemption plugin whether u would borrow above its min.
func (f *Framework) WouldBorrow(u *UnitInfo) bool {
	return f.preempter != nil && f.preempter.WouldBorrow(u)
}

// ListQuotas lists the quotas of the plugin that keeps them, if any.
func (f *Framework) ListQuotas() []schedtypes.Info {
	if f.lister == nil {
		return nil
	}
	return f.lister.ListQuotas()
}

// Sharer returns the plugin that orders queues by fair share, or nil.
func (f *Framework) Sharer() SharePlugin { return f.sharer }

// Runnables returns the plugins with work of their own.
func (f *Framework) Runnables() []Runnable { return f.runnables }

// Plugins returns every enabled plugin.
func (f *Framework) Plugins() []Plugin { return f.plugins }
