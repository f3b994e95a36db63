package elasticquota

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	"github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/quota"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
)

// Plugin is ElasticQuotaV2.
type Plugin struct {
	h framework.Handle

	mu   sync.Mutex
	tree *quota.Tree
	// charged is what each unit holds, and where.
	charged map[string]charge
	// quotas are the ElasticQuotas seen, by name.
	quotas map[string]*eqv1alpha1.ElasticQuota
	// treeErrors are problems of the tree's shape, by quota (e.g. a cycle).
	treeErrors map[string]error

	sync          workqueue.TypedRateLimitingInterface[string]
	registrations []toolscache.ResourceEventHandlerRegistration
}

type charge struct {
	quota string
	used  quota.Resources
}

var (
	_ framework.QueueMapPlugin = (*Plugin)(nil)
	_ framework.FilterPlugin   = (*Plugin)(nil)
	_ framework.ReservePlugin  = (*Plugin)(nil)
	_ framework.UsagePlugin    = (*Plugin)(nil)
	_ framework.Runnable       = (*Plugin)(nil)
	_ framework.Syncer         = (*Plugin)(nil)
)

// HasSynced is true once every ElasticQuota has been seen.
func (p *Plugin) HasSynced() bool {
	for _, r := range p.registrations {
		if !r.HasSynced() {
			return false
		}
	}
	return true
}

// New builds the plugin and registers its informers; it takes no arguments.
func New(_ runtime.RawExtension, h framework.Handle) (framework.Plugin, error) {
	p := &Plugin{
		h: h, tree: quota.New(h.Oversell()), charged: map[string]charge{},
		quotas: map[string]*eqv1alpha1.ElasticQuota{}, treeErrors: map[string]error{},
		sync: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "elasticquota-queues"}),
	}
	ctx := context.Background()
	eqInformer, err := h.Cache().GetInformer(ctx, &eqv1alpha1.ElasticQuota{})
	if err != nil {
		return nil, fmt.Errorf("watch ElasticQuotas (is the ElasticQuota CRD of scheduling.sigs.k8s.io installed?): %w", err)
	}
	reg, err := eqInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.onQuota(obj) },
		UpdateFunc: func(_, obj any) { p.onQuota(obj) },
		DeleteFunc: p.onQuotaDelete,
	})
	if err != nil {
		return nil, err
	}
	p.registrations = append(p.registrations, reg)
	queueInformer, err := h.Cache().GetInformer(ctx, &v1alpha1.Queue{})
	if err != nil {
		return nil, fmt.Errorf("watch Queues: %w", err)
	}
	if _, err := queueInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.onQueue(obj) },
		UpdateFunc: func(_, obj any) { p.onQueue(obj) },
		DeleteFunc: p.onQueue,
	}); err != nil {
		return nil, err
	}
	return p, nil
}

// Name is ElasticQuotaV2.
func (*Plugin) Name() string { return configv1.PluginElasticQuotaV2 }

// Map puts a unit in the queue of its quota: the quota label, else spec.queue.
func (*Plugin) Map(u *v1alpha1.QueueUnit) (string, string) {
	if q := u.Labels[v1alpha1.QuotaNameLabel]; q != "" {
		return q, q
	}
	return u.Spec.Queue, u.Spec.Queue
}

// Cohort is the top-level quota above quotaName.
func (p *Plugin) Cohort(quotaName string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tree.Cohort(quotaName)
}

// Filter admits a unit only when it fits its quota and every ancestor.
func (p *Plugin) Filter(_ context.Context, u *framework.UnitInfo) *framework.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	if u.Quota == "" {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, "noquota",
			"the unit names no quota: set the label "+v1alpha1.QuotaNameLabel+" on its job")
	}
	s := p.tree.Check(u.Quota, u.Request)
	if s == nil {
		return nil
	}
	code := framework.Unschedulable
	if s.NeverFits {
		code = framework.UnschedulableAndUnresolvable
	}
	return framework.NewStatus(code, s.Key(), s.Message())
}

// Reserve charges the unit's request to its quota path.
func (p *Plugin) Reserve(_ context.Context, u *framework.UnitInfo) *framework.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.tree.Check(u.Quota, u.Request); s != nil {
		return framework.NewStatus(framework.Unschedulable, s.Key(), s.Message())
	}
	p.setLocked(u.Key, u.Quota, u.Request)
	return nil
}

// Unreserve gives back what Reserve charged.
func (p *Plugin) Unreserve(_ context.Context, u *framework.UnitInfo) {
	p.mu.Lock()
	freed := p.setLocked(u.Key, "", nil)
	p.mu.Unlock()
	if freed != "" {
		p.h.Freed(freed)
	}
}

// SetUsage records what a unit holds, as read from the API.
func (p *Plugin) SetUsage(key, quotaName string, used quota.Resources) {
	p.mu.Lock()
	freed := p.setLocked(key, quotaName, used)
	p.mu.Unlock()
	if freed != "" {
		p.h.Freed(freed)
	}
}

// setLocked moves a unit's charge and returns the cohort where capacity was
// freed, if any.
func (p *Plugin) setLocked(key, quotaName string, used quota.Resources) string {
	prev, had := p.charged[key]
	if used.IsZero() {
		quotaName, used = "", nil
	}
	if had && prev.quota == quotaName && prev.used.Equal(used) {
		return ""
	}
	freed := ""
	if had {
		// The cohort is taken before the release, which may prune the node.
		cohort := p.tree.Cohort(prev.quota)
		p.tree.Release(prev.quota, prev.used)
		if prev.quota != quotaName || decreased(prev.used, used) {
			freed = cohort
		}
		delete(p.charged, key)
	}
	if quotaName != "" {
		p.tree.Charge(quotaName, used)
		p.charged[key] = charge{quota: quotaName, used: used.Clone()}
	}
	return freed
}

func decreased(before, after quota.Resources) bool {
	for r, v := range before {
		if after[r] < v {
			return true
		}
	}
	return false
}

// Tree gives read access to the quota tree under the plugin's lock.
func (p *Plugin) Tree(read func(t *quota.Tree)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	read(p.tree)
}
