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

package cluster

import (
	"context"
	"fmt"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/app"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/webhook"
)

// WebhookConfigurationName is the MutatingWebhookConfiguration of
// koord-queue-controllers in the local cluster, named as the chart names it.
const WebhookConfigurationName = "koord-queue-controllers"

// installWebhook registers koord-queue-controllers' mutating webhook for the
// enabled extensions as the chart does, but reached by URL on loopback (the
// local cluster has no Service network). The binary makes its own
// certificate for 127.0.0.1, keeps it in a Secret of namespace koord-queue
// and writes its CA bundle and namespace selector into the configuration; it
// is ready only once it has.
func (c *Cluster) installWebhook(ctx context.Context, extensions []string) error {
	reg := app.NewRegistry()
	opts := framework.ExtensionOptions{Enabled: extensions}
	var exts []framework.Extension
	for _, n := range extensions {
		if f := reg[n]; f != nil {
			exts = append(exts, f(opts))
		}
	}
	url := fmt.Sprintf("https://127.0.0.1:%d%s", c.opts.Ports.ControllersWebhook, webhook.Path)
	cfg := webhook.Configuration(WebhookConfigurationName, exts, admissionregistrationv1.WebhookClientConfig{URL: ptr.To(url)})
	old := &admissionregistrationv1.MutatingWebhookConfiguration{}
	err := c.Client.Get(ctx, client.ObjectKey{Name: cfg.Name}, old)
	switch {
	case err == nil:
		cfg.ResourceVersion = old.ResourceVersion
		err = c.Client.Update(ctx, cfg)
	case apierrors.IsNotFound(err):
		err = c.Client.Create(ctx, cfg)
	}
	if err != nil {
		return fmt.Errorf("register the webhook of %s: %w", ControllersBinary, err)
	}
	return nil
}

// webhookArgs serve the webhook on loopback with a self-managed certificate.
func (c *Cluster) webhookArgs() []string {
	return []string{
		"--webhook-port", strconv.Itoa(c.opts.Ports.ControllersWebhook),
		"--webhook-host", "127.0.0.1",
		"--webhook-service-name", "",
		"--webhook-cert-hosts", "127.0.0.1",
		"--webhook-configuration-name", WebhookConfigurationName,
		"--release-namespace", Namespace,
	}
}
