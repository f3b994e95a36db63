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
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/features"
)

// defaultReleaseNamespace is the namespace the chart's install instructions
// use, when neither --release-namespace nor $POD_NAMESPACE says another.
const defaultReleaseNamespace = "koord-queue"

// releaseNamespace is --release-namespace, else $POD_NAMESPACE, else the
// default.
func (o *Options) releaseNamespace() string {
	if o.ReleaseNamespace != "" {
		return o.ReleaseNamespace
	}
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return defaultReleaseNamespace
}

// Options are the command-line options of koord-queue-controllers.
type Options struct {
	Kubeconfig                   string
	EnabledExtensions            []string
	ManageAllJobs                bool
	ManagedJobsNamespaceSelector string
	ReleaseNamespace             string
	DefaultQuota                 string
	ConfigFile                   string
	FeatureGates                 string
	LeaderElect                  bool
	LeaderElectResourceName      string
	LeaderElectResourceNamespace string
	// LeaseDuration is how long a leader's lease lasts; the renew deadline
	// and retry period follow from it (pkg/util/fence).
	LeaseDuration          time.Duration
	MetricsBindAddress     string
	MetricsSecure          bool
	HealthProbeBindAddress string
	QPS                    float32
	Burst                  int
	EventQPS               float32
	EventBurst             int
	Verbosity              int
	// Workers is how many jobs of one extension are reconciled at once.
	Workers int
	// QuotaRefusalTimeout sends an admitted unit whose pods koord-scheduler
	// has refused for quota this long, none of them running, to
	// TimeoutBackoff; 0 turns it off.
	QuotaRefusalTimeout time.Duration

	// WebhookPort serves the admission webhook; 0 turns it off. NewOptions
	// leaves it off (tests run several managers in one process); the flag's
	// default, set by AddFlags, turns it on in the binary.
	WebhookPort              int
	WebhookHost              string
	WebhookCertDir           string
	WebhookSecretName        string
	WebhookServiceName       string
	WebhookConfigurationName string
	WebhookCertHosts         []string

	// SkipNameValidation lets tests run several managers in one process; no
	// flag sets it.
	SkipNameValidation bool
	// WatchNamespaces limits the manager to some namespaces (tests); empty
	// means all. No flag sets it.
	WatchNamespaces []string
	// CRDWaitMaxInterval bounds the wait between two looks for the CRD of an
	// extension that waits for it (tests shorten it); no flag sets it.
	CRDWaitMaxInterval time.Duration
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		EnabledExtensions:            []string{"job"},
		LeaderElect:                  true,
		LeaderElectResourceName:      "koord-queue-controllers",
		LeaderElectResourceNamespace: "koord-queue",
		LeaseDuration:                15 * time.Second,
		MetricsBindAddress:           ":8080",
		MetricsSecure:                true,
		HealthProbeBindAddress:       ":8081",
		QPS:                          50,
		Burst:                        100,
		EventQPS:                     50,
		EventBurst:                   100,
		Verbosity:                    0,
		Workers:                      8,
		QuotaRefusalTimeout:          defaultQuotaRefusalTimeout,
		WebhookSecretName:            "koord-queue-controllers-webhook-cert",
		WebhookServiceName:           "koord-queue-controllers-webhook",
		WebhookConfigurationName:     "koord-queue-controllers",
		CRDWaitMaxInterval:           time.Minute,
	}
}

// defaultQuotaRefusalTimeout is --quota-refusal-timeout's default.
const defaultQuotaRefusalTimeout = time.Minute

// defaultWebhookPort is --webhook-port's default.
const defaultWebhookPort = 9443

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "path to a kubeconfig; empty means in-cluster or $KUBECONFIG")
	fs.StringSliceVar(&o.EnabledExtensions, "enabled-extensions", o.EnabledExtensions, "comma-separated job extensions to run: "+joinNames())
	fs.BoolVar(&o.ManageAllJobs, "manage-all-jobs", o.ManageAllJobs, "take over every job of an enabled kind in the namespaces --managed-jobs-namespace-selector selects, quota label or not, suspending it first; a job that already started is left alone")
	fs.StringVar(&o.ManagedJobsNamespaceSelector, "managed-jobs-namespace-selector", o.ManagedJobsNamespaceSelector,
		"label selector over Namespace labels (kubectl syntax) of the namespaces --manage-all-jobs takes jobs from; empty means \"kubernetes.io/metadata.name notin (kube-system,<release namespace>)\"")
	fs.StringVar(&o.ReleaseNamespace, "release-namespace", o.ReleaseNamespace,
		"namespace koord-queue runs in, left out by the default --managed-jobs-namespace-selector; empty means $POD_NAMESPACE, else "+defaultReleaseNamespace)
	fs.StringVar(&o.DefaultQuota, "default-quota", o.DefaultQuota,
		"quota (ElasticQuota name) of units whose job has no "+schedv1alpha1.QuotaNameLabel+" label; empty leaves them without a quota, never admitted")
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "path to a KoordQueueControllersConfiguration file (per-extension runningTimeout/backoffTimeout)")
	fs.StringVar(&o.FeatureGates, "feature-gates", o.FeatureGates, "comma-separated Name=true|false: "+strings.Join(features.Known, ", ")+" (all off by default)")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "elect a leader so only one replica works")
	fs.StringVar(&o.LeaderElectResourceName, "leader-elect-resource-name", o.LeaderElectResourceName, "name of the leader election lease")
	fs.StringVar(&o.LeaderElectResourceNamespace, "leader-elect-resource-namespace", o.LeaderElectResourceNamespace, "namespace of the leader election lease")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", o.LeaseDuration, "how long a leader's lease lasts; the leader writes for two thirds of it after each renewal began")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "address of the metrics endpoint; 0 turns it off")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure, "serve /metrics over HTTPS with a self-signed certificate, to callers whose bearer token may get the path (TokenReview and SubjectAccessReview); false serves plain HTTP to anyone: for local use only")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "address of /healthz and /readyz; 0 turns it off")
	fs.Float32Var(&o.QPS, "qps", o.QPS, "queries per second to the API server")
	fs.IntVar(&o.Burst, "burst", o.Burst, "burst of queries to the API server")
	fs.Float32Var(&o.EventQPS, "event-qps", o.EventQPS, "queries per second of the separate client that writes events (identical events waiting together are written once, with a count)")
	fs.IntVar(&o.EventBurst, "event-burst", o.EventBurst, "burst of the separate client that writes events")
	fs.IntVarP(&o.Verbosity, "v", "v", o.Verbosity, "log verbosity")
	fs.IntVar(&o.Workers, "workers", o.Workers, "jobs of each enabled extension reconciled at once (one job is never reconciled twice at once)")
	fs.DurationVar(&o.QuotaRefusalTimeout, "quota-refusal-timeout", o.QuotaRefusalTimeout,
		"beside Koordinator: how long koord-scheduler may refuse the pods of an admitted job for quota, none of them running, before the job is suspended and its unit sent to TimeoutBackoff (its quota given back); 0 turns it off")
	fs.IntVar(&o.WebhookPort, "webhook-port", defaultWebhookPort,
		"port of the mutating admission webhook that suspends managed jobs at creation; 0 turns it off")
	fs.StringVar(&o.WebhookHost, "webhook-host", o.WebhookHost, "address the webhook listens on; empty means all")
	fs.StringVar(&o.WebhookCertDir, "webhook-cert-dir", o.WebhookCertDir,
		"folder with the webhook's tls.crt and tls.key supplied by someone else (cert-manager); empty: koord-queue-controllers makes and renews them in --webhook-secret-name and injects the CA into --webhook-configuration-name")
	fs.StringVar(&o.WebhookSecretName, "webhook-secret-name", o.WebhookSecretName, "Secret in the release namespace holding the self-managed webhook CA and certificate")
	fs.StringVar(&o.WebhookServiceName, "webhook-service-name", o.WebhookServiceName, "Service in the release namespace in front of the webhook; its DNS names go in the certificate")
	fs.StringVar(&o.WebhookConfigurationName, "webhook-configuration-name", o.WebhookConfigurationName,
		"MutatingWebhookConfiguration whose CA bundle and namespace selector koord-queue-controllers keeps")
	fs.StringSliceVar(&o.WebhookCertHosts, "webhook-cert-hosts", o.WebhookCertHosts, "further DNS names or IPs for the self-managed webhook certificate (a webhook called by URL)")
}

func joinNames() string {
	out := ""
	for i, n := range names(NewRegistry()) {
		if i > 0 {
			out += ", "
		}
		out += n
	}
	return out
}
