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
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/koordinator-sh/koord-queue/pkg/features"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2/textlogger"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	mpiv2beta1 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	sparkv1beta2 "github.com/kubeflow/spark-operator/v2/api/v1beta2"
	trainerv1alpha1 "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayv1alpha1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1alpha1"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	lwsv1 "sigs.k8s.io/lws/api/leaderworkerset/v1"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	"github.com/koordinator-sh/koord-queue/pkg/eventrecorder"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/leaderworkerset"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/pod"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/webhook"
	"github.com/koordinator-sh/koord-queue/pkg/metrics"
	"github.com/koordinator-sh/koord-queue/pkg/util/election"
	"github.com/koordinator-sh/koord-queue/pkg/util/fence"
	"github.com/koordinator-sh/koord-queue/pkg/util/metricsserving"
	"github.com/koordinator-sh/koord-queue/pkg/util/scheme"
)

// eventSource names the binary in the events it records.
const eventSource = "koord-queue-controllers"

// Run starts koord-queue-controllers and blocks until ctx ends.
func Run(ctx context.Context, o *Options) error {
	ctrl.SetLogger(textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(o.Verbosity))))
	if _, err := o.complete(); err != nil {
		return err
	}
	cfg, err := restConfig(o)
	if err != nil {
		return err
	}
	mgr, err := NewManager(cfg, o, clock.RealClock{})
	if err != nil {
		return err
	}
	if err := metrics.RegisterBuildInfo(ctrlmetrics.Registry); err != nil {
		return fmt.Errorf("register metrics: %w", err)
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("run manager: %w", err)
	}
	return nil
}

func restConfig(o *Options) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if o.Kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	} else {
		cfg, err = ctrl.GetConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	return cfg, nil
}

// NewScheme has every type the binary reads or writes.
func NewScheme() *runtime.Scheme {
	s := scheme.New()
	utilruntime.Must(kubeflowv1.AddToScheme(s))
	utilruntime.Must(mpiv2beta1.AddToScheme(s))
	utilruntime.Must(rayv1.AddToScheme(s))
	utilruntime.Must(rayv1alpha1.AddToScheme(s))
	utilruntime.Must(sparkv1beta2.AddToScheme(s))
	utilruntime.Must(jobsetv1alpha2.AddToScheme(s))
	utilruntime.Must(lwsv1.AddToScheme(s))
	utilruntime.Must(trainerv1alpha1.AddToScheme(s))
	return s
}

// NewManager checks the options, builds the manager and one reconciler per
// enabled extension, and makes sure every enabled extension's CRD is served.
func NewManager(cfg *rest.Config, o *Options, clk clock.Clock) (ctrl.Manager, error) {
	c, err := o.complete()
	if err != nil {
		return nil, err
	}
	// Pods are cached slim: the reconcilers read a few fields of them.
	cacheOpts := cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Transform: framework.TrimPod}}}
	if len(o.WatchNamespaces) > 0 {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range o.WatchNamespaces {
			cacheOpts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	opts := ctrl.Options{
		Scheme:                 NewScheme(),
		Cache:                  cacheOpts,
		Metrics:                metricsserving.Options(o.MetricsBindAddress, o.MetricsSecure, nil),
		HealthProbeBindAddress: o.HealthProbeBindAddress,
	}
	lock, elector, err := leaseLock(cfg, o)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	if elector != nil {
		// The reconcilers wait for the election; the lease is given back
		// when the manager stops (SIGTERM), after they have returned.
		if mgr, err = election.Wrap(mgr, elector); err != nil {
			return nil, fmt.Errorf("create manager: %w", err)
		}
	}
	// The reconcilers (leader only) write through a client fenced by the
	// lease; the webhook's certificate and configuration, kept by every
	// replica, through the manager's.
	writes := mgr.GetClient()
	if lock != nil {
		if writes, err = fence.NewClient(mgr, cfg, lock, clock.RealClock{}); err != nil {
			return nil, err
		}
	}
	missing, err := missingCRDs(mgr.GetRESTMapper(), c.extensions)
	if err != nil {
		return nil, err
	}
	if o.ManageAllJobs {
		mgr.GetLogger().WithName("setup").Info("Managing all jobs", "namespaceSelector", c.managedNamespaces.String(), "defaultQuota", o.DefaultQuota)
	}
	events, err := newEventRecorder(mgr, cfg, o)
	if err != nil {
		return nil, err
	}
	for i := range c.extensions {
		ext := &c.extensions[i]
		running, backoff := c.config.TimeoutsFor(ext.Name)
		r := framework.NewReconciler(writes, ext, events.ForEventsAPI(), clk, framework.ReconcilerOptions{
			ManageAllJobs:       o.ManageAllJobs,
			ManagedNamespaces:   c.managedNamespaces,
			DefaultQuota:        o.DefaultQuota,
			Gates:               c.gates,
			RunningTimeout:      running,
			BackoffTimeout:      backoff,
			QuotaRefusalTimeout: o.QuotaRefusalTimeout,
			SkipNameValidation:  o.SkipNameValidation,
			Workers:             o.Workers,
		})
		if ext.Name == pod.Name {
			// One unit for several pods: the pods have a reconciler of their own.
			pr := pod.NewReconciler(writes, ext, events.ForEventsAPI(), clk, framework.ReconcilerOptions{
				Gates: c.gates, SkipNameValidation: o.SkipNameValidation, Workers: o.Workers,
			})
			if err := pr.SetupWithManager(mgr); err != nil {
				return nil, fmt.Errorf("set up extension %s: %w", ext.Name, err)
			}
			continue
		}
		var setup interface{ SetupWithManager(ctrl.Manager) error } = r
		if ext.Name == leaderworkerset.Name {
			// One unit per group: the sets have a reconciler of their own.
			setup = leaderworkerset.NewReconciler(writes, ext, events.ForEventsAPI(), clk, framework.ReconcilerOptions{
				Gates: c.gates, SkipNameValidation: o.SkipNameValidation, Workers: o.Workers,
			})
		}
		if !missing[ext.Name] {
			if err := setup.SetupWithManager(mgr); err != nil {
				return nil, fmt.Errorf("set up extension %s: %w", ext.Name, err)
			}
			continue
		}
		// Set up on the running manager once the CRD is served.
		w := newCRDWaiter(mgr.GetRESTMapper(), clk, mgr.GetLogger().WithName("crd-wait"), ext, o.CRDWaitMaxInterval,
			func() error { return setup.SetupWithManager(mgr) })
		if err := mgr.Add(w); err != nil {
			return nil, fmt.Errorf("add the CRD wait of extension %s: %w", ext.Name, err)
		}
	}
	if o.WebhookPort != 0 {
		if err := webhook.Setup(mgr, c.extensions, o.webhookOptions(), o.ManageAllJobs, c.managedNamespaces, o.releaseNamespace(), clk); err != nil {
			return nil, fmt.Errorf("set up webhook: %w", err)
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("add healthz: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("add readyz: %w", err)
	}
	return mgr, nil
}

// leaseLock is the fenced Lease lock and its elector (pkg/util/election),
// both nil when leader election is off.
func leaseLock(cfg *rest.Config, o *Options) (*fence.Lock, *election.Elector, error) {
	if !o.LeaderElect {
		return nil, nil, nil
	}
	id, err := fence.Identity()
	if err != nil {
		return nil, nil, err
	}
	lo := fence.LeaseOptions{
		Namespace: o.LeaderElectResourceNamespace, Name: o.LeaderElectResourceName,
		Identity: id, UserAgent: eventSource + "/leader-election/" + id, Duration: o.LeaseDuration,
	}
	lock, err := fence.NewLeaseLock(cfg, lo, clock.RealClock{})
	if err != nil {
		return nil, nil, err
	}
	elector, err := election.ForLease(cfg, lock, lo)
	if err != nil {
		return nil, nil, err
	}
	return lock, elector, nil
}

// newEventRecorder builds the recorder of the extensions' events, with a
// client of its own (--event-qps, --event-burst), and adds it to mgr. Its
// metrics go to the registry /metrics serves; a second manager in the same
// process (tests) shares the first one's.
func newEventRecorder(mgr ctrl.Manager, cfg *rest.Config, o *Options) (*eventrecorder.Recorder, error) {
	em := metrics.NewEvents()
	if err := em.Register(ctrlmetrics.Registry); err != nil && !errors.As(err, &prometheus.AlreadyRegisteredError{}) {
		return nil, fmt.Errorf("register event metrics: %w", err)
	}
	host, _ := os.Hostname()
	events, err := eventrecorder.NewForConfig(cfg, o.EventQPS, o.EventBurst, mgr.GetScheme(), eventrecorder.Options{
		Component: eventSource, Instance: eventSource + "-" + host, Metrics: em,
	})
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(events); err != nil {
		return nil, fmt.Errorf("add the event recorder: %w", err)
	}
	return events, nil
}

// webhookInterval is how often the webhook's certificate and configuration
// are checked.
const webhookInterval = time.Minute

func (o *Options) webhookOptions() webhook.Options {
	return webhook.Options{
		DefaultQuota:      o.DefaultQuota,
		Host:              o.WebhookHost,
		Port:              o.WebhookPort,
		CertDir:           o.WebhookCertDir,
		Secret:            types.NamespacedName{Namespace: o.releaseNamespace(), Name: o.WebhookSecretName},
		ServiceName:       o.WebhookServiceName,
		ExtraHosts:        o.WebhookCertHosts,
		ConfigurationName: o.WebhookConfigurationName,
		Interval:          webhookInterval,
	}
}

// completed is what the options turn into once checked.
type completed struct {
	extensions        []framework.Extension
	gates             features.Gates
	config            *configv1.KoordQueueControllersConfiguration
	managedNamespaces framework.NamespaceSelector
}

// complete checks the options that need no cluster: extension names, feature
// gates, the config file, the namespace selector and the default quota.
func (o *Options) complete() (*completed, error) {
	reg := NewRegistry()
	exts, err := enabledExtensions(reg, o.EnabledExtensions)
	if err != nil {
		return nil, err
	}
	gates, err := features.Parse(o.FeatureGates)
	if err != nil {
		return nil, err
	}
	conf, err := configv1.LoadKoordQueueControllersConfiguration(o.ConfigFile, names(reg))
	if err != nil {
		return nil, fmt.Errorf("load config: %w", err)
	}
	sel, err := framework.ParseNamespaceSelector(o.ManagedJobsNamespaceSelector, o.releaseNamespace())
	if err != nil {
		return nil, fmt.Errorf("--managed-jobs-namespace-selector: %w", err)
	}
	if o.LeaderElect && o.LeaseDuration < 3*time.Second {
		return nil, fmt.Errorf("--leader-elect-lease-duration must be at least 3s, got %s", o.LeaseDuration)
	}
	if o.Workers < 1 {
		return nil, fmt.Errorf("--workers must be at least 1, got %d", o.Workers)
	}
	if o.QuotaRefusalTimeout < 0 {
		return nil, fmt.Errorf("--quota-refusal-timeout must not be negative, got %s", o.QuotaRefusalTimeout)
	}
	if o.EventQPS <= 0 || o.EventBurst <= 0 {
		return nil, fmt.Errorf("--event-qps and --event-burst must be positive, got %v and %d", o.EventQPS, o.EventBurst)
	}
	if o.DefaultQuota != "" {
		errs := append(validation.IsDNS1123Subdomain(o.DefaultQuota), validation.IsValidLabelValue(o.DefaultQuota)...)
		if len(errs) > 0 {
			return nil, fmt.Errorf("--default-quota %q is not a quota name: %s", o.DefaultQuota, strings.Join(errs, "; "))
		}
	}
	return &completed{extensions: exts, gates: gates, config: conf, managedNamespaces: sel}, nil
}

// enabledExtensions builds the named extensions, refusing unknown names.
func enabledExtensions(reg framework.Registry, enabled []string) ([]framework.Extension, error) {
	valid := names(reg)
	var unknown, seen []string
	for _, n := range enabled {
		n = strings.TrimSpace(n)
		switch {
		case n == "" || slices.Contains(seen, n):
		case reg[n] == nil:
			unknown = append(unknown, n)
		default:
			seen = append(seen, n)
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("unknown extension(s) %s in --enabled-extensions; valid extensions: %s",
			strings.Join(unknown, ", "), strings.Join(valid, ", "))
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("--enabled-extensions names no extension; valid extensions: %s", strings.Join(valid, ", "))
	}
	opts := framework.ExtensionOptions{Enabled: seen}
	exts := make([]framework.Extension, 0, len(seen))
	for _, n := range seen {
		exts = append(exts, reg[n](opts))
	}
	return exts, nil
}

// missingCRDs names the enabled extensions whose kind the API server does
// not serve yet; they wait for their CRD (crdWaiter). Other errors of the
// look-up stop the start.
func missingCRDs(mapper meta.RESTMapper, exts []framework.Extension) (map[string]bool, error) {
	missing := map[string]bool{}
	var errs []error
	for _, ext := range exts {
		served, err := crdServed(mapper, &ext)
		switch {
		case err != nil:
			errs = append(errs, err)
		case !served:
			missing[ext.Name] = true
		}
	}
	return missing, errors.Join(errs...)
}
