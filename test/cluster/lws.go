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

// The lws controller's webhooks default and validate LeaderWorkerSets, and
// its pod webhook gives each pod its group's labels (group index, worker
// index, group key), which its controllers and koord-queue read. The local
// cluster registers all four as the stock manifests do (the pod ones only
// for pods with the set's name label), served on 127.0.0.1 with a
// certificate made here; its own certificate rotation is off.
const (
	lwsMutatingWebhook   = "lws-mutating-webhook-configuration"
	lwsValidatingWebhook = "lws-validating-webhook-configuration"
)

// prepareLWSController writes the controller's certificate and
// configuration file (webhook on port, probes on probeAddr, no metrics, no
// leader election) and registers its webhooks; it returns the file.
func (c *Cluster) prepareLWSController(ctx context.Context, port int, probeAddr string) (string, error) {
	dir := filepath.Join(c.opts.StateDir, "lws-controller")
	certDir := filepath.Join(dir, "certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return "", err
	}
	caBundle, err := webhookServingCert("lws-controller", certDir)
	if err != nil {
		return "", err
	}
	config := filepath.Join(dir, "config.yaml")
	body := fmt.Sprintf(`apiVersion: config.lws.x-k8s.io/v1alpha1
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
	ops := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}
	sets := []admissionregistrationv1.RuleWithOperations{{
		Operations: ops,
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{"leaderworkerset.x-k8s.io"}, APIVersions: []string{"v1"}, Resources: []string{"leaderworkersets"}},
	}}
	pods := []admissionregistrationv1.RuleWithOperations{{
		Operations: ops,
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
	}}
	ofSet := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "leaderworkerset.sigs.k8s.io/name", Operator: metav1.LabelSelectorOpExists,
	}}}
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	v1 := []string{"v1"}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: lwsMutatingWebhook},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "mleaderworkerset.kb.io", ClientConfig: clientConfig("/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset"),
			Rules: sets, FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: v1,
		}, {
			Name: "mpod.kb.io", ClientConfig: clientConfig("/mutate--v1-pod"), ObjectSelector: ofSet,
			Rules: pods, FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: v1,
		}},
	}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: lwsValidatingWebhook},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "vleaderworkerset.kb.io", ClientConfig: clientConfig("/validate-leaderworkerset-x-k8s-io-v1-leaderworkerset"),
			Rules: sets, FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: v1,
		}, {
			Name: "vpod.kb.io", ClientConfig: clientConfig("/validate--v1-pod"), ObjectSelector: ofSet,
			Rules: pods, FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: v1,
		}},
	}
	if err := c.replaceWebhookConfigs(ctx, LWSController, mutating, validating); err != nil {
		return "", err
	}
	return config, nil
}
