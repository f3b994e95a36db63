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

// The trainer controller's webhooks validate TrainJobs and training runtimes
// (a TrainJob naming a missing runtime is refused, podTemplateOverrides may
// change only while suspended), so the local cluster registers them as the
// stock manifests do, served on 127.0.0.1 with a certificate made here. Its
// own certificate rotation (for a Service in a namespace) is off. It has no
// certificate folder setting: its webhook server reads the default one under
// the temporary folder, so the process runs with TMPDIR pointing at ours.
const trainerValidatingWebhook = "trainer-validating-webhook-configuration"

// prepareTrainerController writes the controller's certificate and
// configuration file (webhook on port, probes on probeAddr, no metrics, no
// leader election) and registers its webhooks; it returns the file and the
// folder to give the process as TMPDIR.
func (c *Cluster) prepareTrainerController(ctx context.Context, port int, probeAddr string) (config, tmpDir string, err error) {
	dir := filepath.Join(c.opts.StateDir, "trainer-controller")
	tmpDir = filepath.Join(dir, "tmp")
	certDir := filepath.Join(tmpDir, "k8s-webhook-server", "serving-certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return "", "", err
	}
	caBundle, err := webhookServingCert("trainer-controller", certDir)
	if err != nil {
		return "", "", err
	}
	config = filepath.Join(dir, "config.yaml")
	body := fmt.Sprintf(`apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
leaderElection:
  leaderElect: false
certManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: %d
metrics:
  bindAddress: "0"
health:
  healthProbeBindAddress: %s
  readinessEndpointName: readyz
  livenessEndpointName: healthz
`, port, probeAddr)
	if err := os.WriteFile(config, []byte(body), 0o600); err != nil {
		return "", "", err
	}
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: trainerValidatingWebhook}}
	for _, resource := range []string{"clustertrainingruntime", "trainingruntime", "trainjob"} {
		validating.Webhooks = append(validating.Webhooks, admissionregistrationv1.ValidatingWebhook{
			Name: "validator." + resource + ".trainer.kubeflow.org",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				URL:      ptr.To("https://127.0.0.1:" + strconv.Itoa(port) + "/validate-trainer-kubeflow-org-v1alpha1-" + resource),
				CABundle: caBundle,
			},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"trainer.kubeflow.org"}, APIVersions: []string{"v1alpha1"}, Resources: []string{resource + "s"}},
			}},
			FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
		})
	}
	if err := c.replaceWebhookConfigs(ctx, TrainerController, validating); err != nil {
		return "", "", err
	}
	return config, tmpDir, nil
}
