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
	"os"
	"path/filepath"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The jobset controller's webhooks default and validate JobSets (its
// controller needs the defaults: spec.network, spec.successPolicy), so the
// local cluster registers them as the stock manifests do, served on
// 127.0.0.1 with a certificate made here; its own certificate rotation (for
// a Service in a namespace) is off. Its pod webhooks serve exclusive
// placement only and are not registered.
const (
	jobSetMutatingWebhook   = "jobset-mutating-webhook-configuration"
	jobSetValidatingWebhook = "jobset-validating-webhook-configuration"
)

// prepareJobSetController writes the controller's certificate and
// configuration file (webhook on port, probes on probeAddr, no metrics, no
// leader election) and registers its JobSet webhooks; it returns the file.
func (c *Cluster) prepareJobSetController(ctx context.Context, port int, probeAddr string) (string, error) {
	dir := filepath.Join(c.opts.StateDir, "jobset-controller")
	certDir := filepath.Join(dir, "certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return "", err
	}
	caBundle, err := webhookServingCert("jobset-controller", certDir)
	if err != nil {
		return "", err
	}
	config := filepath.Join(dir, "config.yaml")
	body := fmt.Sprintf(`apiVersion: config.jobset.x-k8s.io/v1alpha1
kind: Configuration
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
metrics:
  bindAddress: "0"
health:
  healthProbeBindAddress: %s
`, port, certDir, probeAddr)
	if err := os.WriteFile(config, []byte(body), 0o600); err != nil {
		return "", err
	}
	clientConfig := func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{
			URL:      ptr.To("https://127.0.0.1:" + strconv.Itoa(port) + path),
			CABundle: caBundle,
		}
	}
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{"jobset.x-k8s.io"}, APIVersions: []string{"v1alpha2"}, Resources: []string{"jobsets"}},
	}}
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: jobSetMutatingWebhook},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "mjobset.kb.io", ClientConfig: clientConfig("/mutate-jobset-x-k8s-io-v1alpha2-jobset"),
			Rules: rules, FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
		}},
	}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: jobSetValidatingWebhook},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "vjobset.kb.io", ClientConfig: clientConfig("/validate-jobset-x-k8s-io-v1alpha2-jobset"),
			Rules: rules, FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
		}},
	}
	if err := c.replaceWebhookConfigs(ctx, JobSetController, mutating, validating); err != nil {
		return "", err
	}
	return config, nil
}
