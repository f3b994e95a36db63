package scheduler

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	"github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/features"
	"github.com/koordinator-sh/koord-queue/pkg/metrics"
	"github.com/koordinator-sh/koord-queue/pkg/queue"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
)

// Options configure a Scheduler.
type Options struct {
	Config *configv1.KoordQueueConfiguration
	// Oversell multiplies every quota max (1: none).
	Oversell float64
	// StatusWorkers write QueueUnit status in parallel.
	StatusWorkers int
	// Clock tells time and runs the deadlines (protection ends, lifecycle
	// timeouts); tests pass a fake one.
	Clock Clock
	// Metrics records what happens; nil records nothing.
	Metrics *metrics.Recorder
	// Gates are the feature gates in force.
	Gates features.Gates
	// AdmissionCheckWorkers run the lifecycle controller.
	AdmissionCheckWorkers int
	// NodeFitCheck refuses units whose pods fit no node (pkg/nodefit). Off
	// for clusters that add nodes on demand.
	NodeFitCheck bool
}

// Scheduler admits QueueUnits.
type Scheduler struct {
	client   client.Client
	reader   client.Reader
	cache    cache.Cache
	recorder record.EventRecorder
	clock    Clock
	opts     Options

	fw        *framework.Framework
	queues    *queue.Manager
	writer    *statusWriter
	lifecycle workqueue.TypedRateLimitingInterface[string]

	mu    sync.Mutex
	units map[string]*unitState
	// queueObjs holds the served Queues (namespace v1alpha1.QueueNamespace)
	// by name, for their admission checks; ceilings their priority ceilings
	// (koord-queue/max-priority), when set.
	queueObjs map[string]*v1alpha1.Queue
	ceilings  map[string]*int32
	// nominated are the units waiting for their victims.
	nominated nominations
	// wakeups are the deadlines at which a cohort is tried again (see wakeAt).
	wakeups *wakeups
	// nodes are the cluster's nodes for the node fit check; nil when it is off.
	nodes *nodes

	registrations []toolscache.ResourceEventHandlerRegistration
	leading       atomic.Bool
}

// unitState is what the scheduler remembers of one QueueUnit.
type unitState struct {
	obj          *v1alpha1.QueueUnit
	queue, quota string
	// inflight is true from the decision to admit until its write is done.
	inflight bool
	// holding is true when the last seen phase held quota.
	holding bool
	// reason is the waiting reason last reported (status and event), and
	// wanted its failure; shown is the reason whose report the API carries,
	// with its message, as far as the scheduler knows (see reportWaiting).
	reason              string
	wanted              *queue.Failure
	shown, shownMessage string
	// evicting is true from the choice of the unit as a victim until it no
	// longer holds quota.
	evicting bool
	// deleted is true once the unit is gone; queue entries may still point here.
	deleted bool
	// fit is the unit's last node fit answer.
	fit *nodeFit
	// relabelled is the quota its labels named last while it held another
	// (reported once).
	relabelled string
}

var (
	_ framework.Handle               = (*Scheduler)(nil)
	_ manager.Runnable               = (*Scheduler)(nil)
	_ manager.LeaderElectionRunnable = (*Scheduler)(nil)
)

// New builds a scheduler on mgr's client and cache, with the plugins cfg
// enables from registry, and adds it to mgr.
func New(mgr manager.Manager, registry framework.Registry, opts Options) (*Scheduler, error) {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Oversell <= 0 {
		opts.Oversell = 1
	}
	if opts.StatusWorkers <= 0 {
		opts.StatusWorkers = 8
	}
	if opts.AdmissionCheckWorkers <= 0 {
		opts.AdmissionCheckWorkers = 2
	}
	s := &Scheduler{
		client: mgr.GetClient(), reader: mgr.GetAPIReader(), cache: mgr.GetCache(),
		//nolint:staticcheck // core/v1 events keep lastTimestamp, which the guide's debugging command shows.
		recorder: mgr.GetEventRecorderFor("koord-queue"), clock: opts.Clock, opts: opts,
		units: map[string]*unitState{}, nominated: newNominations(),
		queueObjs: map[string]*v1alpha1.Queue{}, ceilings: map[string]*int32{}, lifecycle: newLifecycleQueue(opts.Clock),
	}
	s.wakeups = newWakeups(opts.Clock, s.Freed)
	s.writer = newStatusWriter(s.client, s.reader)
	fw, err := framework.New(opts.Config, registry, s)
	if err != nil {
		return nil, err
	}
	s.fw = fw
	s.queues = queue.NewManager(fw.Less())
	s.queues.SetClock(s.clock.Now)
	if sharer := fw.Sharer(); sharer != nil {
		// Queues are named like the quota that pays for their units.
		s.queues.SetShareOrder(sharer.Share, sharer.Sharing)
	}
	if fw.PriorityMajor() {
		s.queues.DeclarePriorityMajor()
	}
	if err := s.watch(context.Background()); err != nil {
		return nil, err
	}
	if err := mgr.Add(s); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Scheduler) watch(ctx context.Context) error {
	unitInformer, err := s.cache.GetInformer(ctx, &v1alpha1.QueueUnit{})
	if err != nil {
		return fmt.Errorf("watch QueueUnits: %w", err)
	}
	reg, err := unitInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.onUnit(obj) },
		UpdateFunc: func(_, obj any) { s.onUnit(obj) },
		DeleteFunc: s.onUnitDelete,
	})
	if err != nil {
		return err
	}
	s.registrations = append(s.registrations, reg)
	queueInformer, err := s.cache.GetInformer(ctx, &v1alpha1.Queue{})
	if err != nil {
		return fmt.Errorf("watch Queues: %w", err)
	}
	reg, err = queueInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.onQueue(obj) },
		UpdateFunc: func(_, obj any) { s.onQueue(obj) },
		DeleteFunc: s.onQueueDelete,
	})
	if err != nil {
		return err
	}
	s.registrations = append(s.registrations, reg)
	// A Queue's priorityClassName is resolved through PriorityClasses.
	pcInformer, err := s.cache.GetInformer(ctx, &schedulingv1.PriorityClass{})
	if err != nil {
		return fmt.Errorf("watch PriorityClasses: %w", err)
	}
	reg, err = pcInformer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.resyncQueues() },
		UpdateFunc: func(_, _ any) { s.resyncQueues() },
	})
	if err != nil {
		return err
	}
	s.registrations = append(s.registrations, reg)
	if s.opts.NodeFitCheck {
		if err := s.watchNodes(ctx); err != nil {
			return err
		}
	}
	return s.watchAdmissionChecks(ctx)
}

// resyncQueues re-reads every Queue's settings (a PriorityClass changed).
func (s *Scheduler) resyncQueues() {
	s.mu.Lock()
	qs := make([]*v1alpha1.Queue, 0, len(s.queueObjs))
	for _, q := range s.queueObjs {
		if q.Spec.Priority == nil && q.Spec.PriorityClassName != "" {
			qs = append(qs, q)
		}
	}
	s.mu.Unlock()
	for _, q := range qs {
		s.onQueue(q)
	}
}

// NeedLeaderElection is true: only the leader admits and writes.
func (s *Scheduler) NeedLeaderElection() bool { return true }

// Start runs the admission loop until ctx ends. Nothing is admitted before the
// caches have delivered every object, so usage is rebuilt first.
func (s *Scheduler) Start(ctx context.Context) error {
	log := klog.FromContext(ctx).WithName("scheduler")
	ctx = klog.NewContext(ctx, log)
	if !s.cache.WaitForCacheSync(ctx) {
		return fmt.Errorf("caches did not sync")
	}
	if err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		for _, r := range s.registrations {
			if !r.HasSynced() {
				return false, nil
			}
		}
		return s.fw.HasSynced(), nil
	}); err != nil {
		return err
	}
	s.leading.Store(true)
	log.Info("Scheduler started; usage rebuilt from the API")
	go s.writer.run(ctx, s.opts.StatusWorkers)
	s.runLifecycle(ctx, s.opts.AdmissionCheckWorkers)
	for _, r := range s.fw.Runnables() {
		go func() {
			if err := r.Start(ctx); err != nil {
				log.Error(err, "Plugin stopped")
			}
		}()
	}
	go wait.UntilWithContext(ctx, s.updateQueueStatuses, s.opts.Config.QueueStatusUpdatePeriod.Duration)
	// What followers saw but did not write is written now.
	s.resyncAll()
	s.queues.Kick()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.queues.Kicked():
			s.schedule(ctx)
		}
	}
}

// Handle implementation.

// Client returns the cached client.
func (s *Scheduler) Client() client.Client { return s.client }

// Cache returns the informer cache.
func (s *Scheduler) Cache() cache.Cache { return s.cache }

// Recorder returns the event recorder.
func (s *Scheduler) Recorder() record.EventRecorder { return s.recorder }

// Freed makes the waiting units of a cohort worth trying again.
func (s *Scheduler) Freed(cohort string) {
	if s.queues != nil {
		s.queues.Freed(cohort)
	}
}

// Invalidate makes every waiting unit worth trying again.
func (s *Scheduler) Invalidate() {
	if s.queues != nil {
		s.queues.Invalidate()
	}
}

// Clock is the scheduler's clock.
func (s *Scheduler) Clock() clock.Clock { return s.clock }

// Oversell is the factor applied to every quota max.
func (s *Scheduler) Oversell() float64 { return s.opts.Oversell }

// ReclaimProtection is the configured reclaim protection period.
func (s *Scheduler) ReclaimProtection() time.Duration {
	return s.opts.Config.ReclaimProtectionPeriod.Duration
}

// Queues exposes the pending queues (read-only use: visibility, debug).
func (s *Scheduler) Queues() *queue.Manager { return s.queues }

// Framework exposes the plugins (read-only use: visibility, debug).
func (s *Scheduler) Framework() *framework.Framework { return s.fw }
