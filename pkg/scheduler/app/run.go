package app

import (
	"context"
	"fmt"
	"net/http"
	"net/http/pprof"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	"github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/metrics"
	"github.com/koordinator-sh/koord-queue/pkg/nodefit"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/framework"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/plugins/elasticquota"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler/plugins/priority"
	"github.com/koordinator-sh/koord-queue/pkg/util/metricsserving"
	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
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
	cfg.UserAgent = "koord-queue"
	mgr, err := newManager(cfg, o)
	if err != nil {
		return err
	}
	schedCfg, err := withPluginArgs(o.Config, o.OversellRate)
	if err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	rec := metrics.NewRecorder()
	s, err := scheduler.New(mgr, Registry(), scheduler.Options{
		Config: schedCfg, StatusWorkers: o.StatusWorkers, Metrics: rec,
		Gates: o.Gates, AdmissionCheckWorkers: o.AdmissionCheckWorkers, Clock: o.Clock,
		NodeFitCheck: o.NodeFitCheck,
	})
	if err != nil {
		return err
	}
	reg := o.MetricsRegistry
	if reg == nil {
		reg = ctrlmetrics.Registry
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

func newManager(cfg *rest.Config, o *Options) (manager.Manager, error) {
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
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme.New(),
		// The probes reach /healthz and /readyz without credentials.
		Metrics:                 metricsserving.Options(o.MetricsBindAddress, o.MetricsSecure, handlers, "/healthz", "/readyz"),
		HealthProbeBindAddress:  "0",
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        o.LeaderElectResourceName,
		LeaderElectionNamespace: o.LeaderElectResourceNamespace,
		LeaseDuration:           &o.LeaseDuration,
		Cache: cache.Options{
			// Managed fields are large and unused here.
			ByObject: map[client.Object]cache.ByObject{
				&v1alpha1.QueueUnit{}: {Transform: stripUnit},
				// The node fit check reads allocatable, labels and taints only.
				&corev1.Node{}: {Transform: stripNode},
			},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("manager: %w", err)
	}
	return mgr, nil
}

func stripNode(obj any) (any, error) {
	if n, ok := obj.(*corev1.Node); ok {
		return nodefit.Strip(n), nil
	}
	return obj, nil
}

func stripUnit(obj any) (any, error) {
	if u, ok := obj.(*v1alpha1.QueueUnit); ok {
		u.ManagedFields = nil
	}
	return obj, nil
}
