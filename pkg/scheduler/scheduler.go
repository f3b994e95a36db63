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
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/features"
	"github.com/koordinator-sh/koord-queue/pkg/metrics"
	"github.com/koordinator-sh/koord-queue/pkg/queue"
	"github.com/koordinator-sh/koord-queue/pkg/schedtypes"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
)

// Options configure a Scheduler.
type Options struct {
	Config *configv1.KoordQueueConfiguration
	// StatusWorkers write QueueUnit status in parallel.
	StatusWorkers int
	// AdmissionWindow is the most admissions whose writes may be in flight
	// at once; a pass decides no more until some land. Deciding far ahead
	// of the writes would give quota to units in decision order for as long
	// as the writes take, before units of higher priority that come
	// meanwhile. 0 or less: no bound.
	AdmissionWindow int
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
	// Fence reports whether this replica may still write: false from the
	// moment its lease may have been lost (see pkg/util/fence); nil: always.
	Fence func() bool
	// Client is what the scheduler reads and writes through, fenced like
	// Fence right before each write leaves (pkg/util/fence); nil: the
	// manager's client.
	Client client.Client
	// Recorder records the scheduler's events (pkg/eventrecorder, which
	// loses none silently); nil is the manager's client-go recorder.
	Recorder record.EventRecorder
}

// Scheduler admits QueueUnits. It wires its parts together and runs them;
// each part owns its own state (doc.go lists them and their locks).
type Scheduler struct {
	env      *env
	informer cache.Cache

	cache     *unitCache
	registry  *queueRegistry
	intake    *intake
	queueSync *queueSync
	pass      *passDriver
	preemptor *preemptor
	reports   *reporter
	lifecycle *lifecycle
	writer    *statusWriter
	wakeups   *wakeups
	nodes     *nodes

	registrations []toolscache.ResourceEventHandlerRegistration
	// watched names the kind of each registration, for Unsynced.
	watched []string
}

var (
	_ manager.Runnable               = (*Scheduler)(nil)
	_ manager.LeaderElectionRunnable = (*Scheduler)(nil)
)

// New builds a scheduler on mgr's client and cache, with the plugins cfg
// enables from registry, and adds it to mgr.
func New(mgr manager.Manager, registry framework.Registry, opts Options) (*Scheduler, error) {
	recorder := opts.Recorder
	if recorder == nil {
		//nolint:staticcheck // core/v1 events keep lastTimestamp, which the guide's debugging command shows.
		recorder = mgr.GetEventRecorderFor("koord-queue")
	}
	c := opts.Client
	if c == nil {
		c = mgr.GetClient()
	}
	s, err := build(deps{
		client: c, reader: mgr.GetAPIReader(), informers: mgr.GetCache(),
		recorder: recorder,
	}, registry, opts)
	if err != nil {
		return nil, err
	}
	if err := s.watch(context.Background()); err != nil { //nolint:forbidigo // set up before the manager starts: no caller context exists yet
		return nil, err
	}
	if err := mgr.Add(s); err != nil {
		return nil, err
	}
	return s, nil
}

// deps are what the scheduler is built on; tests give fakes.
type deps struct {
	client    client.Client
	reader    client.Reader
	informers cache.Cache
	recorder  record.EventRecorder
}

// build makes a scheduler and its parts, without watching anything.
func build(d deps, registry framework.Registry, opts Options) (*Scheduler, error) {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.StatusWorkers <= 0 {
		opts.StatusWorkers = 8
	}
	if opts.AdmissionCheckWorkers <= 0 {
		opts.AdmissionCheckWorkers = 2
	}
	e := &env{client: d.client, reader: d.reader, recorder: d.recorder, clock: opts.Clock, opts: opts}
	s := &Scheduler{env: e, informer: d.informers, registry: newQueueRegistry()}
	fw, err := framework.New(opts.Config, registry, &pluginHandle{env: e, informers: d.informers})
	if err != nil {
		return nil, err
	}
	e.fw = fw
	queueOpts := []queue.Option{queue.WithClock(e.clock.Now)}
	if sharer := fw.Sharer(); sharer != nil {
		// Queues are named like the quota that pays for their units.
		queueOpts = append(queueOpts,
			queue.WithShareOrder(func(q schedtypes.QueueName) float64 { return sharer.Share(schedtypes.QuotaName(q)) }, sharer.Sharing),
			queue.WithGuaranteedFirst(func(q schedtypes.QueueName) bool { return sharer.BelowMin(schedtypes.QuotaName(q)) }))
	}
	if fw.PriorityMajor() {
		queueOpts = append(queueOpts, queue.WithPriorityMajor())
	}
	e.queues = queue.NewManager(fw.Less(), queueOpts...)
	s.cache = newUnitCache(s.registry, fw.SetUsage, fw.UnitGone)
	s.writer = newStatusWriter(e.client, e.reader, opts.Fence, func(u *schedv1alpha1.QueueUnit, err error) {
		e.recorder.Eventf(u, corev1.EventTypeWarning, "StatusWriteRefused",
			"the API server refuses the unit's status write: %v; it is made again with a backoff", err)
	})
	s.wakeups = newWakeups(e.clock, e.queues.Freed)
	if opts.NodeFitCheck {
		s.nodes = newNodes(e.queues.Invalidate)
	}
	s.reports = &reporter{env: e, cache: s.cache, writer: s.writer}
	s.lifecycle = newLifecycle(e, s.cache, s.reports)
	s.preemptor = &preemptor{env: e, cache: s.cache, reports: s.reports, wakeups: s.wakeups, nominated: newNominations()}
	s.intake = newIntake(e, s.cache, s.registry, s.reports, s.reports, arrivals{e}, s.preemptor, s.lifecycle)
	s.queueSync = &queueSync{env: e, registry: s.registry, cache: s.cache, intake: s.intake, reports: s.reports}
	s.pass = &passDriver{env: e, cache: s.cache, registry: s.registry, preemptor: s.preemptor, reports: s.reports,
		intake: s.intake, writer: s.writer, wakeups: s.wakeups, nodes: s.nodes}
	return s, nil
}

func (s *Scheduler) watch(ctx context.Context) error {
	handlers := []struct {
		obj  client.Object
		what string
		h    toolscache.ResourceEventHandler
	}{
		{&schedv1alpha1.QueueUnit{}, "QueueUnits", toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { s.intake.onUnit(obj) },
			UpdateFunc: func(_, obj any) { s.intake.onUnit(obj) },
			DeleteFunc: s.intake.onUnitDelete,
		}},
		{&schedv1alpha1.Queue{}, "Queues", toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { s.queueSync.onQueue(obj) },
			UpdateFunc: func(_, obj any) { s.queueSync.onQueue(obj) },
			DeleteFunc: s.queueSync.onQueueDelete,
		}},
		// A Queue's priorityClassName is resolved through PriorityClasses.
		{&schedulingv1.PriorityClass{}, "PriorityClasses", toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { s.queueSync.resync() },
			UpdateFunc: func(_, _ any) { s.queueSync.resync() },
		}},
	}
	if s.nodes != nil {
		handlers = append(handlers, struct {
			obj  client.Object
			what string
			h    toolscache.ResourceEventHandler
		}{&corev1.Node{}, "Nodes", s.nodes.handlers()})
	}
	handlers = append(handlers, struct {
		obj  client.Object
		what string
		h    toolscache.ResourceEventHandler
	}{&schedv1alpha1.AdmissionCheck{}, "AdmissionChecks", s.lifecycle.admissionCheckHandlers()})
	for _, h := range handlers {
		inf, err := s.informer.GetInformer(ctx, h.obj)
		if err != nil {
			return fmt.Errorf("watch %s: %w", h.what, err)
		}
		reg, err := inf.AddEventHandler(h.h)
		if err != nil {
			return err
		}
		s.registrations = append(s.registrations, reg)
		s.watched = append(s.watched, h.what)
	}
	return nil
}

// unsynced names what this replica has not read in full yet: the kinds whose
// handlers have not seen every object, and the quota plugins.
func (s *Scheduler) unsynced() []string {
	var out []string
	for i, r := range s.registrations {
		if !r.HasSynced() {
			out = append(out, s.watched[i])
		}
	}
	if !s.env.fw.HasSynced() {
		out = append(out, "quota plugins")
	}
	return out
}

// NeedLeaderElection is true: only the leader admits and writes.
func (s *Scheduler) NeedLeaderElection() bool { return true }

// Start runs the admission loop until ctx ends. Nothing is admitted before the
// caches have delivered every object, so usage is rebuilt first.
func (s *Scheduler) Start(ctx context.Context) error {
	log := klog.FromContext(ctx).WithName("scheduler")
	ctx = klog.NewContext(ctx, log)
	if !s.informer.WaitForCacheSync(ctx) {
		return fmt.Errorf("caches did not sync")
	}
	if err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		for _, r := range s.registrations {
			if !r.HasSynced() {
				return false, nil
			}
		}
		return s.env.fw.HasSynced(), nil
	}); err != nil {
		return err
	}
	if err := catchUp(ctx, s.env.reader, s.cache, catchUpRelist); err != nil {
		return err
	}
	s.env.leading.Store(true)
	log.Info("Scheduler started; usage rebuilt from the API")
	// Start returns only once every part that writes has returned, so the
	// manager releases the lease after the last write (drain).
	var parts sync.WaitGroup
	defer parts.Wait()
	parts.Go(func() { s.writer.run(ctx, s.env.opts.StatusWorkers) })
	s.lifecycle.run(ctx, s.env.opts.AdmissionCheckWorkers)
	for _, r := range s.env.fw.Runnables() {
		parts.Go(func() {
			if err := r.Start(ctx); err != nil {
				log.Error(err, "Plugin stopped")
			}
		})
	}
	parts.Go(func() {
		wait.UntilWithContext(ctx, s.queueSync.updateStatuses, s.env.opts.Config.QueueStatusUpdatePeriod.Duration)
	})
	// What followers saw but did not write is written now.
	s.intake.resyncAll()
	s.env.queues.Kick()
	for {
		select {
		case <-ctx.Done():
			log.Info("Scheduler stopping; draining the writes in flight")
			return nil
		case <-s.env.queues.Kicked():
			s.pass.schedule(ctx)
		}
	}
}
