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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koordinator-sh/koord-queue/pkg/util/mutation"
)

// GuideCheckWriter is the ServiceAccount (namespace/name) of the user guide's
// example admission-check controller; the cluster lists it in the chart's
// queueUnitStatusPolicy.admissionCheckWriters unless
// Options.AdmissionCheckWriters says otherwise.
const GuideCheckWriter = "provisioning/provisioner"

// chartPolicyTemplates are the chart's templates whose objects the cluster
// applies: the tenant and metrics roles, the ValidatingAdmissionPolicies with
// their bindings, the admission-check writers' RBAC, and the two binaries'
// RBAC (every extension's, the webhook's and the visibility server's
// delegated authentication). Of these only the kinds in chartPolicyKinds are
// applied: the visibility and webhook templates' APIService, webhook
// configuration and Services are the cluster's own (visibility.go,
// webhook.go).
// Replicas of a binary run in several replicas act as the binary's
// ServiceAccount with their pod's name (addReplicaUsers), so the chart's RBAC
// and both leader fences judge them as in a cluster; a single replica is the
// admin and matches no fence.
var chartPolicyTemplates = []string{
	"templates/security.yaml", "templates/elasticquota-policy.yaml", "templates/leader-fence.yaml",
	"templates/rbac-koord-queue.yaml", "templates/rbac-koord-queue-controllers.yaml", "templates/visibility.yaml",
	"templates/webhook.yaml",
}

// chartPolicyKinds are the kinds applied from chartPolicyTemplates. The
// webhook's Secret comes with its Role: the chart makes it empty and lets
// koord-queue-controllers only read and update it.
var chartPolicyKinds = map[string]bool{
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
	"ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true,
	"Secret": true,
}

// chartPolicyValues turn on what the local cluster runs: the visibility
// server with its web view and every extension, so their RBAC is rendered.
var chartPolicyValues = []string{
	"controller.enableVisibilityServer=true", "controller.visibility.insecureSkipTLSVerify=true", "controller.visibility.ui.enabled=true",
	"extension.tf.enable=true", "extension.pytorch.enable=true", "extension.argo.enable=true",
	"extension.spark.enable=true", "extension.ray.enable=true", "extension.raycluster.enable=true",
	"extension.mpi.enable=true", "extension.jobset.enable=true", "extension.leaderworkerset.enable=true", "extension.trainjob.enable=true",
}

// installPolicies renders chartPolicyTemplates with the built helm, for the
// release namespace and the admission-check writers, applies every object,
// and waits until the ElasticQuota policy refuses a bad quota (both policies
// reach admission through the same informer).
func (c *Cluster) installPolicies(ctx context.Context, repoRoot string) error {
	helm := c.tool("helm")
	if _, err := os.Stat(helm); err != nil {
		return fmt.Errorf("helm not found in %s (the cluster installs the chart's policies): build it with 'hack/tools.sh helm'", c.opts.ToolsDir)
	}
	writers, err := json.Marshal(c.opts.AdmissionCheckWriters)
	if err != nil {
		return err
	}
	args := []string{"template", "koord-queue", filepath.Join(repoRoot, "charts", "koord-queue"),
		"--namespace", Namespace,
		"--api-versions", "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy",
		"--set-json", "queueUnitStatusPolicy.admissionCheckWriters.serviceAccounts=" + string(writers)}
	for _, t := range chartPolicyTemplates {
		args = append(args, "--show-only", t)
	}
	for _, v := range chartPolicyValues {
		args = append(args, "--set", v)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, helm, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("helm %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	objs, err := DecodeObjects(stdout.Bytes())
	if err != nil {
		return fmt.Errorf("the chart's policies: %w", err)
	}
	policies, want := 0, 4
	noFence := c.opts.KoordQueue.Mutation == mutation.NoFence
	if noFence {
		want = 2
	}
	for _, o := range objs {
		if !chartPolicyKinds[o.GetKind()] || noFence && strings.HasSuffix(o.GetName(), "-leader-fence") {
			continue
		}
		if err := c.Apply(ctx, o); err != nil {
			return fmt.Errorf("apply %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		if o.GetKind() == "ValidatingAdmissionPolicy" {
			policies++
		}
	}
	if policies != want {
		return fmt.Errorf("the chart rendered %d ValidatingAdmissionPolicies, want %d (queueunit-status, elasticquota, two leader fences unless the bug %s is planted)", policies, want, mutation.NoFence)
	}
	c.logf("installed the chart's policies (admission-check writers %v)", c.opts.AdmissionCheckWriters)
	return c.waitFor(ctx, "the chart's policies in force", time.Minute, func(ctx context.Context) (bool, error) {
		err := c.Client.Create(ctx, policyProbe(), client.DryRunAll)
		if err == nil {
			return false, fmt.Errorf("a quota with min above max is still accepted")
		}
		return strings.Contains(err.Error(), "spec.min is above spec.max"), nil
	}, c.procs...)
}

// policyProbe is an ElasticQuota the chart's policy refuses (min above max).
func policyProbe() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"min": map[string]any{"cpu": "2"}, "max": map[string]any{"cpu": "1"}},
	}}
	u.SetAPIVersion("scheduling.sigs.k8s.io/v1alpha1")
	u.SetKind("ElasticQuota")
	u.SetNamespace(metav1.NamespaceDefault)
	u.SetName("koord-queue-policy-probe")
	return u
}
