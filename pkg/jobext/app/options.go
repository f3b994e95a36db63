package app

import (
	"os"
	"strings"

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
	MetricsBindAddress           string
	MetricsSecure                bool
	HealthProbeBindAddress       string
	QPS                          float32
	Burst                        int
	Verbosity                    int

	// SkipNameValidation lets tests run several managers in one process; no
	// flag sets it.
	SkipNameValidation bool
	// WatchNamespaces limits the manager to some namespaces (tests); empty
	// means all. No flag sets it.
	WatchNamespaces []string
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		EnabledExtensions:            []string{"job"},
		LeaderElect:                  true,
		LeaderElectResourceName:      "koord-queue-controllers",
		LeaderElectResourceNamespace: "koord-queue",
		MetricsBindAddress:           ":8080",
		MetricsSecure:                true,
		HealthProbeBindAddress:       ":8081",
		QPS:                          50,
		Burst:                        100,
		Verbosity:                    0,
	}
}

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
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "address of the metrics endpoint; 0 turns it off")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure, "serve /metrics over HTTPS with a self-signed certificate, to callers whose bearer token may get the path (TokenReview and SubjectAccessReview); false serves plain HTTP to anyone: for local use only")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "address of /healthz and /readyz; 0 turns it off")
	fs.Float32Var(&o.QPS, "qps", o.QPS, "queries per second to the API server")
	fs.IntVar(&o.Burst, "burst", o.Burst, "burst of queries to the API server")
	fs.IntVarP(&o.Verbosity, "v", "v", o.Verbosity, "log verbosity")
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
