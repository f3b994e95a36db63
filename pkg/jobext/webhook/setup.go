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

package webhook

import (
	"crypto/tls"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/util/certrotation"
)

// Options say how the webhook is served.
type Options struct {
	// Host and Port are where it listens; Host empty means every address.
	Host string
	Port int
	// CertDir, when set, holds tls.crt and tls.key supplied by someone else
	// (cert-manager); the binary then only reads them. Empty: the binary
	// makes and renews them in Secret.
	CertDir string
	// Secret keeps the self-managed CA and certificate.
	Secret types.NamespacedName
	// ServiceName is the Service in front of the webhook, in Secret's
	// namespace; its DNS names are in the certificate.
	ServiceName string
	// ExtraHosts are further DNS names or IPs for the certificate (a webhook
	// reached by URL, as in the local cluster).
	ExtraHosts []string
	// ConfigurationName is the MutatingWebhookConfiguration to keep.
	ConfigurationName string
	// Interval is how often the certificate and configuration are checked.
	Interval time.Duration
	// DefaultQuota is --default-quota: the quota put on the pod templates of
	// a job --manage-all-jobs queues without a quota label.
	DefaultQuota string
}

// Hosts are the names the serving certificate covers.
func (o Options) Hosts() []string {
	var hosts []string
	if o.ServiceName != "" {
		s, ns := o.ServiceName, o.Secret.Namespace
		hosts = append(hosts, s+"."+ns+".svc", s, s+"."+ns, s+"."+ns+".svc.cluster.local")
	}
	return append(hosts, o.ExtraHosts...)
}

// Setup adds the webhook server, its handler and the configurer to mgr.
// selector is the --manage-all-jobs namespace selector; the webhook's own
// namespaceSelector is derived from it, leaving out kube-system and
// releaseNamespace.
func Setup(mgr ctrl.Manager, exts []framework.Extension, o Options, manageAll bool, selector framework.NamespaceSelector, releaseNamespace string, clk clock.Clock) error {
	nsSelector, err := selector.WebhookSelector(releaseNamespace)
	if err != nil {
		return err
	}
	var rotator *certrotation.Rotator
	serverOpts := webhook.Options{Host: o.Host, Port: o.Port, CertDir: o.CertDir}
	if o.CertDir == "" {
		if len(o.Hosts()) == 0 {
			return fmt.Errorf("the webhook's certificate needs a service name or extra hosts")
		}
		rotator = certrotation.New(mgr.GetClient(), mgr.GetAPIReader(), clk, certrotation.DefaultOptions(o.Secret, o.Hosts()))
		serverOpts.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.GetCertificate = rotator.GetCertificate }}
	}
	server := webhook.NewServer(serverOpts)
	server.Register(Path, NewHandler(exts, mgr.GetClient(), manageAll, selector, clk, WithDefaultQuota(o.DefaultQuota)).Webhook())
	if err := mgr.Add(server); err != nil {
		return fmt.Errorf("add webhook server: %w", err)
	}
	configurer := NewConfigurer(mgr.GetClient(), mgr.GetAPIReader(), clk, rotator, o.ConfigurationName, nsSelector, o.Interval)
	if err := mgr.Add(configurer); err != nil {
		return fmt.Errorf("add webhook configurer: %w", err)
	}
	if err := mgr.AddReadyzCheck("webhook-configuration", configurer.Ready); err != nil {
		return fmt.Errorf("add webhook readiness: %w", err)
	}
	if err := mgr.AddReadyzCheck("webhook-server", server.StartedChecker()); err != nil {
		return fmt.Errorf("add webhook readiness: %w", err)
	}
	return nil
}
