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

package app

import (
	"context"
	"fmt"
	"net/http"
	"net/http/pprof"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/eventrecorder"
	"github.com/koordinator-sh/koord-queue/pkg/metrics"
	"github.com/koordinator-sh/koord-queue/pkg/nodefit"
	"github.com/koordinator-sh/koord-queue/pkg/quota/foreign"
	"github.com/koordinator-sh/koord-queue/pkg/quotaqueues"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/plugins/elasticquota"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/plugins/priority"
	"github.com/koordinator-sh/koord-queue/pkg/util/election"
	"github.com/koordinator-sh/koord-queue/pkg/util/fence"
	"github.com/koordinator-sh/koord-queue/pkg/util/mappings"
	"github.com/koordinator-sh/koord-queue/pkg/util/metricsserving"
	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
	"github.com/koordinator-sh/koord-queue/pkg/util/watchjson"
)

// Registry is every plugin this build knows.
func Registry() framework.Registry {
	return framework.Registry{
		configv1.PluginPriority:       priority.New,
		configv1.PluginElasticQuotaV2: elasticquota.New,
	}
}

// Run starts koord-queue and blocks until ctx ends.
func Run(ctx context.Context, o *Options) error {
	loading := clientcmd.NewDefaultClientConfigLoadingRules()
	loading.ExplicitPath = o.Kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(loading, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	return RunWithConfig(ctx, cfg, o)
}

// RunWithConfig starts koord-queue against the API server of cfg.
func RunWithConfig(ctx context.Context, cfg *rest.Config, o *Options) error {
	log := klog.FromContext(ctx)
	ctrl.SetLogger(log)
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	id, err := fence.Identity()
	if err != nil {
		return err
	}
	// The API server names the field manager after the part before "/";
	// the rest tells replicas apart (audit logs).
	cfg.UserAgent = "koord-queue/" + id
	var lock *fence.Lock
	var elector *election.Elector
	if o.LeaderElect {
		lo := fence.LeaseOptions{
			Namespace: o.LeaderElectResourceNamespace, Name: o.LeaderElectResourceName,
			Identity: id, UserAgent: "koord-queue/leader-election/" + id, Duration: o.LeaseDuration,
		}
		if lock, err = fence.NewLeaseLock(cfg, lo, clock.RealClock{}); err != nil {
			return err
		}
		if elector, err = election.ForLease(cfg, lock, lo); err != nil {
			return err
		}
	}
	mgr, err := newManager(cfg, o, elector)
	if err != nil {
		return err
	}
	var mayWrite func() bool
	var writes client.Client
	if lock != nil {
		mayWrite = lock.Allowed
		// Every write of the leader is checked against the lease again
		// right before it leaves, after client-go's rate limiter.
		if writes, err = fence.NewClient(mgr, cfg, lock, clock.RealClock{}); err != nil {
			return err
		}
	}
	schedCfg, err := withPluginArgs(o.Config, o.OversellRate)
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	reg := o.MetricsRegistry
	if reg == nil {
		reg = ctrlmetrics.Registry
	}
	events, err := newEventRecorder(mgr, cfg, o, id, reg)
	if err != nil {
		return err
	}
	rec := metrics.NewRecorder()
	s, err := scheduler.New(mgr, Registry(), scheduler.Options{
		Fence: mayWrite, Client: writes,
		Config: schedCfg, StatusWorkers: o.StatusWorkers, AdmissionWindow: o.admissionWindow(), Metrics: rec,
		Gates: o.Gates, AdmissionCheckWorkers: o.AdmissionCheckWorkers, Clock: o.Clock,
		NodeFitCheck: o.NodeFitCheck, Recorder: events,
	})
	if err != nil {
		return err
	}
	if err := addQuotaQueues(ctx, mgr, schedCfg, writes, events); err != nil {
		return err
	}
	if err := metrics.Register(reg, rec, s); err != nil {
		return fmt.Errorf("register metrics: %w", err)
	}
	if err := addReadAPIs(mgr, cfg, s, o); err != nil {
		return err
	}
	log.Info("Starting koord-queue", "metrics", o.MetricsBindAddress, "metricsSecure", o.MetricsSecure, "leaderElection", o.LeaderElect, "plugins", o.Config.Plugins)
	return mgr.Start(ctx)
}

// addQuotaQueues adds the controller that keeps one Queue per ElasticQuota
// (pkg/quotaqueues) when the ElasticQuotaV2 plugin is enabled. It writes
// through writes, the fenced client of a leader (nil: the manager's).
func addQuotaQueues(ctx context.Context, mgr manager.Manager, cfg *configv1.KoordQueueConfiguration, writes client.Client, events record.EventRecorder) error {
	if !slices.ContainsFunc(cfg.Plugins, func(p configv1.Plugin) bool { return p.Name == configv1.PluginElasticQuotaV2 }) {
		return nil
	}
	if writes == nil {
		writes = mgr.GetClient()
	}
	c := quotaqueues.New(writes, events)
	if err := c.Watch(ctx, mgr.GetCache()); err != nil {
		return err
	}
	if err := mgr.Add(c); err != nil {
		return fmt.Errorf("add the Queues of the ElasticQuotas: %w", err)
	}
	return nil
}

// newEventRecorder builds the recorder of koord-queue's events, with a
// client of its own (--event-qps, --event-burst) and its metrics on reg, and
// adds it to mgr.
func newEventRecorder(mgr manager.Manager, cfg *rest.Config, o *Options, id string, reg prometheus.Registerer) (*eventrecorder.Recorder, error) {
	em := metrics.NewEvents()
	if err := em.Register(reg); err != nil {
		return nil, fmt.Errorf("register event metrics: %w", err)
	}
	events, err := eventrecorder.NewForConfig(cfg, o.EventQPS, o.EventBurst, mgr.GetScheme(), eventrecorder.Options{
		Component: "koord-queue", Instance: id, Metrics: em,
	})
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(events); err != nil {
		return nil, fmt.Errorf("add the event recorder: %w", err)
	}
	return events, nil
}

// newManager builds the manager; with an elector, the runnables that only
// the leader runs wait for it (pkg/util/election), which gives the lease
// back when the manager stops, after they have returned.
func newManager(cfg *rest.Config, o *Options, elector *election.Elector) (manager.Manager, error) {
	handlers := map[string]http.Handler{
		"/healthz": http.StripPrefix("/healthz", &healthz.Handler{Checks: map[string]healthz.Checker{"ping": healthz.Ping}}),
		"/readyz":  http.StripPrefix("/readyz", &healthz.Handler{Checks: map[string]healthz.Checker{"ping": healthz.Ping}}),
	}
	if o.EnablePprof {
		handlers["/debug/pprof/"] = http.HandlerFunc(pprof.Index)
		handlers["/debug/pprof/profile"] = http.HandlerFunc(pprof.Profile)
		handlers["/debug/pprof/heap"] = pprof.Handler("heap")
		handlers["/debug/pprof/goroutine"] = pprof.Handler("goroutine")
	}
	sch := scheme.New()
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("manager: %w", err)
	}
	// QueueUnits are most of what is watched: their events are decoded in
	// fewer passes (watchjson), on the cache's connection.
	uw := NewUnitWatch()
	units, err := watchjson.NewWatcher(cfg, httpClient, sch, uw.Kind, "queueunits")
	if err != nil {
		return nil, fmt.Errorf("manager: %w", err)
	}
	opts := ctrl.Options{
		Scheme: sch,
		// The probes reach /healthz and /readyz without credentials.
		Metrics:                metricsserving.Options(o.MetricsBindAddress, o.MetricsSecure, handlers, "/healthz", "/readyz"),
		HealthProbeBindAddress: "0",
		// Status writes go through the metadata client, which asks the
		// mapper on every request.
		MapperProvider: mappings.Provider,
		Cache: cache.Options{
			HTTPClient: httpClient,
			// The watch of QueueUnits leaves out selectors: none is set.
			NewInformer: uw.NewInformer(units),
			// Managed fields are large and unused here.
			ByObject: map[client.Object]cache.ByObject{
				&schedv1alpha1.QueueUnit{}: {Transform: stripUnit},
				// The node fit check reads allocatable, labels and taints only.
				&corev1.Node{}: {Transform: stripNode},
				// Foreign usage reads a pod's labels, node, phase and requests.
				&corev1.Pod{}: {Transform: foreign.Slim},
			},
		},
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("manager: %w", err)
	}
	if elector == nil {
		return mgr, nil
	}
	// A replica that stops (a rolling update) hands the lease over at once
	// instead of making the next one wait a lease duration.
	wrapped, err := election.Wrap(mgr, elector)
	if err != nil {
		return nil, fmt.Errorf("manager: %w", err)
	}
	return wrapped, nil
}

func stripNode(obj any) (any, error) {
	if n, ok := obj.(*corev1.Node); ok {
		return nodefit.Strip(n), nil
	}
	return obj, nil
}

func stripUnit(obj any) (any, error) {
	if u, ok := obj.(*schedv1alpha1.QueueUnit); ok {
		u.ManagedFields = nil
	}
	return obj, nil
}
