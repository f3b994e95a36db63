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
	"flag"
	"fmt"
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	configv1 "github.com/koordinator-sh/koord-queue/apis/config/v1"
	"github.com/koordinator-sh/koord-queue/pkg/features"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler"
)

// Options are the command line of koord-queue.
type Options struct {
	Kubeconfig                   string
	QPS                          float32
	Burst                        int
	EventQPS                     float32
	EventBurst                   int
	ConfigFile                   string
	OversellRate                 float64
	FeatureGates                 string
	AdmissionCheckWorkers        int
	StatusWorkers                int
	AdmissionWindow              int
	LeaderElect                  bool
	LeaderElectResourceName      string
	LeaderElectResourceNamespace string
	LeaseDuration                time.Duration
	MetricsBindAddress           string
	// MetricsSecure serves /metrics (and pprof) over HTTPS to callers
	// allowed to get the path; false is plain HTTP for local use.
	MetricsSecure bool
	EnablePprof   bool
	// NodeFitCheck refuses units whose pods fit no node.
	NodeFitCheck bool
	// The visibility aggregated API (pkg/visibility) and the debug API
	// (pkg/debugapi); both off by default.
	EnableVisibilityServer bool
	VisibilityBindAddress  string
	VisibilityCertDir      string
	// VisibilityUI serves the read-only web view under the visibility API's
	// .../ui/ (pkg/visibility/ui).
	VisibilityUI      bool
	EnableAPIHandler  bool
	APIHandlerAddress string

	// Parsed from the above by Complete.
	Config *configv1.KoordQueueConfiguration
	Gates  features.Gates

	// MetricsRegistry receives the scheduler's metrics; nil means the one
	// served on --metrics-bind-address. Tests running several schedulers in
	// one process give each its own.
	MetricsRegistry prometheus.Registerer
	// Clock runs the scheduler's deadlines; nil is the real clock. Tests pass
	// a fake one to move time on by hand.
	Clock scheduler.Clock
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		QPS: 100, Burst: 200, EventQPS: 50, EventBurst: 100, OversellRate: 1, AdmissionCheckWorkers: 2, StatusWorkers: 8,
		LeaderElect: true, LeaderElectResourceName: "koord-queue", LeaderElectResourceNamespace: "koord-queue",
		LeaseDuration: 15 * time.Second, MetricsBindAddress: ":10259", MetricsSecure: true,
		VisibilityBindAddress: ":8443", APIHandlerAddress: "127.0.0.1:10260", NodeFitCheck: true,
	}
}

// AddFlags registers the flags, klog's among them.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig; empty means in-cluster configuration.")
	fs.Float32Var(&o.QPS, "qps", o.QPS, "Queries per second to the API server.")
	fs.IntVar(&o.Burst, "burst", o.Burst, "Burst of queries to the API server.")
	fs.Float32Var(&o.EventQPS, "event-qps", o.EventQPS, "Queries per second of the separate client that writes events (identical events waiting together are written once, with a count).")
	fs.IntVar(&o.EventBurst, "event-burst", o.EventBurst, "Burst of the separate client that writes events.")
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "Path to a KoordQueueConfiguration file (apiVersion scheduling.k8s.io/v1); empty means the defaults (plugins Priority and ElasticQuotaV2).")
	fs.Float64Var(&o.OversellRate, "oversellrate", o.OversellRate, "Factor applied to every quota max; 1 means no overselling.")
	fs.StringVar(&o.FeatureGates, "feature-gates", o.FeatureGates, "Comma list of Gate=true|false. Gates: "+fmt.Sprint(features.Known)+".")
	fs.IntVar(&o.AdmissionCheckWorkers, "admissionCheckControllerWorker", o.AdmissionCheckWorkers, "Workers of the admission check state machine.")
	fs.BoolVar(&o.NodeFitCheck, "node-fit-check", o.NodeFitCheck, "Refuse units whose pods fit no schedulable node (by allocatable, taints, node selector and required affinity); turn off where nodes are added on demand.")
	fs.IntVar(&o.StatusWorkers, "status-workers", o.StatusWorkers, "Workers writing QueueUnit status.")
	fs.IntVar(&o.AdmissionWindow, "admission-window", o.AdmissionWindow, "Most admissions whose QueueUnit writes may be in flight at once; passes decide no more until some land, so freed quota goes by priority at the time of writing rather than far ahead of it. 0 means one second of --qps, at least --status-workers; a negative value means no bound.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Elect a leader among replicas; only the leader admits.")
	fs.StringVar(&o.LeaderElectResourceName, "leader-elect-resource-name", o.LeaderElectResourceName, "Name of the leader election Lease.")
	fs.StringVar(&o.LeaderElectResourceNamespace, "leader-elect-resource-namespace", o.LeaderElectResourceNamespace, "Namespace of the leader election Lease.")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", o.LeaseDuration, "How long a leader's lease lasts.")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "Address of the server for /metrics, /healthz and /readyz; 0 turns it off.")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure, "Serve /metrics (and pprof) over HTTPS with a self-signed certificate, to callers whose bearer token may get the path (TokenReview and SubjectAccessReview); /healthz and /readyz stay open. false serves plain HTTP to anyone: for local use only.")
	fs.BoolVar(&o.EnablePprof, "enable-pprof", o.EnablePprof, "Serve Go's /debug/pprof/ profiles on the metrics address, behind the same authentication as /metrics (off by default: they expose internals).")
	fs.BoolVar(&o.EnableVisibilityServer, "enableVisibilityServer", o.EnableVisibilityServer, "Serve the visibility aggregated API (visibility.koord-queue.x-k8s.io/v1alpha1) over HTTPS, with authentication and authorization delegated to kube-apiserver.")
	fs.StringVar(&o.VisibilityBindAddress, "visibility-bind-address", o.VisibilityBindAddress, "Address of the visibility API server.")
	fs.StringVar(&o.VisibilityCertDir, "visibility-cert-dir", o.VisibilityCertDir, "Folder holding tls.crt and tls.key for the visibility API; empty means a self-signed certificate made at start.")
	fs.BoolVar(&o.VisibilityUI, "visibility-ui", o.VisibilityUI, "Serve the read-only web view of quotas and queues under the visibility API, at /apis/visibility.koord-queue.x-k8s.io/v1alpha1/ui/ through kube-apiserver (e.g. kubectl proxy), authorized as resource ui of that group; needs --enableVisibilityServer.")
	fs.BoolVar(&o.EnableAPIHandler, "enableApiHandler", o.EnableAPIHandler, "Serve the debug HTTP API (/debug/quotas, /debug/queues, /debug/queues/{name}): plain HTTP, no authentication.")
	fs.StringVar(&o.APIHandlerAddress, "api-handler-address", o.APIHandlerAddress, "Address of the debug HTTP API; keep it on loopback.")
	goflags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(goflags)
	fs.AddGoFlagSet(goflags)
}

// Complete validates the flags and reads the configuration file. Every error
// names the flag or field at fault.
func (o *Options) Complete() error {
	if o.QPS <= 0 {
		return fmt.Errorf("--qps must be positive, got %v", o.QPS)
	}
	if o.Burst <= 0 {
		return fmt.Errorf("--burst must be positive, got %d", o.Burst)
	}
	if o.EventQPS <= 0 || o.EventBurst <= 0 {
		return fmt.Errorf("--event-qps and --event-burst must be positive, got %v and %d", o.EventQPS, o.EventBurst)
	}
	if math.IsNaN(o.OversellRate) || math.IsInf(o.OversellRate, 0) || o.OversellRate < 1 {
		return fmt.Errorf("--oversellrate must be a finite number of at least 1, got %v", o.OversellRate)
	}
	if o.AdmissionCheckWorkers < 1 {
		return fmt.Errorf("--admissionCheckControllerWorker must be at least 1, got %d", o.AdmissionCheckWorkers)
	}
	if o.StatusWorkers < 1 {
		return fmt.Errorf("--status-workers must be at least 1, got %d", o.StatusWorkers)
	}
	if o.LeaderElect && (o.LeaderElectResourceName == "" || o.LeaderElectResourceNamespace == "") {
		return fmt.Errorf("--leader-elect needs --leader-elect-resource-name and --leader-elect-resource-namespace")
	}
	if o.EnableVisibilityServer && o.VisibilityBindAddress == "" {
		return fmt.Errorf("--enableVisibilityServer needs --visibility-bind-address")
	}
	if o.VisibilityUI && !o.EnableVisibilityServer {
		return fmt.Errorf("--visibility-ui needs --enableVisibilityServer: the web view is served by the visibility API server")
	}
	if o.EnableAPIHandler && o.APIHandlerAddress == "" {
		return fmt.Errorf("--enableApiHandler needs --api-handler-address")
	}
	var err error
	if o.Gates, err = features.Parse(o.FeatureGates); err != nil {
		return err
	}
	if o.Config, err = configv1.LoadKoordQueueConfiguration(o.ConfigFile); err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	// Refused here, at start, rather than when the scheduler is built.
	if _, err := withPluginArgs(o.Config, o.OversellRate); err != nil {
		return fmt.Errorf("--config: %w", err)
	}
	return nil
}

// admissionWindow is the scheduler's AdmissionWindow for these flags: 0
// picks one second of the client's write rate, at least one admission per
// status worker; a negative value is no bound.
func (o *Options) admissionWindow() int {
	switch {
	case o.AdmissionWindow < 0:
		return 0
	case o.AdmissionWindow > 0:
		return o.AdmissionWindow
	}
	return max(o.StatusWorkers, int(o.QPS))
}
