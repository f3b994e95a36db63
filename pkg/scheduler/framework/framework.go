package framework

import (
	"context"
	"fmt"
	"slices"
	"strings"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	"github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
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
	runnables []Runnable
}

// New builds the plugins the configuration enables, in its order.
func New(cfg *configv1.KoordQueueConfiguration, registry Registry, h Handle) (*Framework, error) {
	args := map[string]configv1.PluginConfig{}
	for _, pc := range cfg.PluginConfigs {
		args[pc.Name] = pc
	}
	f := &Framework{}
	for _, p := range cfg.Plugins {
		factory, ok := registry[p.Name]
		if !ok {
			known := make([]string, 0, len(registry))
			for name := range registry {
				known = append(known, name)
			}
			slices.Sort(known)
			return nil, fmt.Errorf("plugin %q is not registered (known: %s)", p.Name, strings.Join(known, ", "))
		}
		plugin, err := factory(args[p.Name].Args, h)
		if err != nil {
			return nil, fmt.Errorf("plugin %s: %w", p.Name, err)
		}
		f.plugins = append(f.plugins, plugin)
		if s, ok := plugin.(QueueSortPlugin); ok {
			if f.sorter != nil {
				return nil, fmt.Errorf("plugins %s and %s both sort queues; enable one", f.sorter.Name(), s.Name())
			}
			f.sorter = s
		}
		if m, ok := plugin.(QueueMapPlugin); ok {
			if f.mapper != nil {
				return nil, fmt.Errorf("plugins %s and %s both map units to queues; enable one", f.mapper.Name(), m.Name())
			}
			f.mapper = m
		}
		if x, ok := plugin.(FilterPlugin); ok {
			f.filters = append(f.filters, x)
		}
		if x, ok := plugin.(ReservePlugin); ok {
			f.reservers = append(f.reservers, x)
		}
		if x, ok := plugin.(UsagePlugin); ok {
			f.usages = append(f.usages, x)
		}
		if x, ok := plugin.(PreemptPlugin); ok && f.preempter == nil {
			f.preempter = x
		}
		if x, ok := plugin.(Runnable); ok {
			f.runnables = append(f.runnables, x)
		}
	}
	if f.mapper == nil {
		return nil, fmt.Errorf("no enabled plugin maps units to queues: enable %s", configv1.PluginElasticQuotaV2)
	}
	return f, nil
}

// Less orders units; without a sort plugin it is nil, which the queues
// read as their default order (priority, then creation time).
func (f *Framework) Less() schedtypes.Less {
	if f.sorter == nil {
		return nil
	}
	return f.sorter.Less
}

// PriorityMajor reports whether Less orders by priority before anything
// else: without a sort plugin, or when the plugin says so.
func (f *Framework) PriorityMajor() bool {
	if f.sorter == nil {
		return true
	}
	pm, ok := f.sorter.(interface{ PriorityMajor() bool })
	return ok && pm.PriorityMajor()
}

// Map returns the unit's queue and quota.
func (f *Framework) Map(u *v1alpha1.QueueUnit) (string, string) { return f.mapper.Map(u) }

// Cohort returns the cohort of a quota.
func (f *Framework) Cohort(quotaName string) string { return f.mapper.Cohort(quotaName) }

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
func (f *Framework) SetUsage(key string, h *schedtypes.Holding) {
	for _, p := range f.usages {
		p.SetUsage(key, h)
	}
}

// Preempt asks the preemption plugin, if one is enabled, for victims.
func (f *Framework) Preempt(ctx context.Context, u *UnitInfo, preempt, reclaim bool, skip func(string) bool) schedtypes.Victims {
	if f.preempter == nil || (!preempt && !reclaim) {
		return schedtypes.Victims{}
	}
	return f.preempter.Preempt(ctx, u, preempt, reclaim, skip)
}

// HasSynced reports whether every plugin with informers has seen them all.
func (f *Framework) HasSynced() bool {
	for _, p := range f.plugins {
		if s, ok := p.(Syncer); ok && !s.HasSynced() {
			return false
		}
	}
	return true
}

// WouldBorrow asks the preemption plugin whether u would borrow above its min.
func (f *Framework) WouldBorrow(u *UnitInfo) bool {
	return f.preempter != nil && f.preempter.WouldBorrow(u)
}

// ListQuotas lists the quotas of the first plugin that keeps them.
func (f *Framework) ListQuotas() []schedtypes.Info {
	for _, p := range f.plugins {
		if l, ok := p.(QuotaLister); ok {
			return l.ListQuotas()
		}
	}
	return nil
}

// Sharer returns the first plugin that orders queues by fair share, or nil.
func (f *Framework) Sharer() SharePlugin {
	for _, p := range f.plugins {
		if s, ok := p.(SharePlugin); ok {
			return s
		}
	}
	return nil
}

// Runnables returns the plugins with work of their own.
func (f *Framework) Runnables() []Runnable { return f.runnables }

// Plugins returns every enabled plugin.
func (f *Framework) Plugins() []Plugin { return f.plugins }
