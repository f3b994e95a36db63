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
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koordinator-sh/koord-queue/test/util/proc"
)

// Operator names a stock job operator that the cluster can run as a process
// against its kubeconfig. The binaries come from `hack/tools.sh <name>`, in
// the folder `hack/tools.sh operators-dir` prints; kwok's nodes run the pods
// they create.
type Operator string

// The stock operators.
const (
	// TrainingOperator is the Kubeflow training operator (TFJob, PyTorchJob).
	TrainingOperator Operator = "training-operator"
	// MPIOperator is the Kubeflow MPI operator (MPIJob v2beta1).
	MPIOperator Operator = "mpi-operator"
	// KubeRayOperator is the KubeRay operator (RayCluster, RayJob).
	KubeRayOperator Operator = "kuberay-operator"
	// SparkOperator is the Kubeflow spark-operator v2 controller
	// (SparkApplication).
	SparkOperator Operator = "spark-operator"
	// WorkflowController is Argo's workflow-controller (Workflow).
	WorkflowController Operator = "workflow-controller"
	// JobSetController is the JobSet controller (JobSet v1alpha2).
	JobSetController Operator = "jobset-controller"
	// LWSController is the LeaderWorkerSet controller (LeaderWorkerSet v1).
	LWSController Operator = "lws-controller"
	// TrainerController is the Kubeflow Trainer v2 controller (TrainJob
	// v1alpha1); it makes JobSets, so it starts the JobSet controller too.
	TrainerController Operator = "trainer-controller"
)

// Operators lists every operator the cluster knows how to run.
var Operators = []Operator{TrainingOperator, MPIOperator, KubeRayOperator, SparkOperator, WorkflowController, JobSetController, LWSController, TrainerController}

// ParseOperators turns a comma-separated list into operators; "all" means
// every one. Unknown names are an error that lists the known ones.
func ParseOperators(list string) ([]Operator, error) {
	var out []Operator
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		switch {
		case s == "":
		case s == "all":
			out = append(out, Operators...)
		case slices.Contains(Operators, Operator(s)):
			out = append(out, Operator(s))
		default:
			return nil, fmt.Errorf("unknown operator %q (known: %v, or all)", s, Operators)
		}
	}
	return out, nil
}

// operatorSpec says where an operator's CRDs come from: the module it is
// built from (resolved in its folder under hack/operators) and the files in
// that module.
type operatorSpec struct {
	hackDir string
	module  string
	crds    []string
}

var operatorSpecs = map[Operator]operatorSpec{
	TrainingOperator: {"training-operator", "github.com/kubeflow/training-operator", []string{
		"manifests/base/crds/kubeflow.org_tfjobs.yaml",
		"manifests/base/crds/kubeflow.org_pytorchjobs.yaml",
	}},
	MPIOperator: {"mpi-operator", "github.com/kubeflow/mpi-operator", []string{
		"manifests/base/kubeflow.org_mpijobs.yaml",
	}},
	KubeRayOperator: {"kuberay", "github.com/ray-project/kuberay/ray-operator", []string{
		"config/crd/bases/ray.io_rayclusters.yaml",
		"config/crd/bases/ray.io_rayjobs.yaml",
		// Its RayService controller always runs and needs the kind served.
		"config/crd/bases/ray.io_rayservices.yaml",
	}},
	SparkOperator: {"spark-operator", "github.com/kubeflow/spark-operator/v2", []string{
		"config/crd/bases/sparkoperator.k8s.io_sparkapplications.yaml",
		"config/crd/bases/sparkoperator.k8s.io_scheduledsparkapplications.yaml",
		"config/crd/bases/sparkoperator.k8s.io_sparkconnects.yaml",
	}},
	WorkflowController: {"argo", "github.com/argoproj/argo-workflows/v3", []string{
		"manifests/base/crds/minimal/argoproj.io_workflows.yaml",
		"manifests/base/crds/minimal/argoproj.io_workflowtemplates.yaml",
		"manifests/base/crds/minimal/argoproj.io_clusterworkflowtemplates.yaml",
		"manifests/base/crds/minimal/argoproj.io_cronworkflows.yaml",
		"manifests/base/crds/minimal/argoproj.io_workflowtaskresults.yaml",
		"manifests/base/crds/minimal/argoproj.io_workflowtasksets.yaml",
		"manifests/base/crds/minimal/argoproj.io_workflowartifactgctasks.yaml",
		"manifests/base/crds/minimal/argoproj.io_workfloweventbindings.yaml",
	}},
	JobSetController: {"jobset", "sigs.k8s.io/jobset", []string{
		"config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml",
	}},
	LWSController: {"lws", "sigs.k8s.io/lws", []string{
		"config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml",
	}},
	TrainerController: {"trainer", "github.com/kubeflow/trainer/v2", []string{
		"manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml",
		"manifests/base/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml",
		"manifests/base/crds/trainer.kubeflow.org_trainingruntimes.yaml",
	}},
}

// OperatorCRDFiles returns the CRD manifests of op, from its Go module in the
// module cache (the module is downloaded if needed).
func OperatorCRDFiles(ctx context.Context, repoRoot string, op Operator) ([]string, error) {
	spec, ok := operatorSpecs[op]
	if !ok {
		return nil, fmt.Errorf("unknown operator %q (known: %v)", op, Operators)
	}
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", spec.module)
	cmd.Dir = filepath.Join(repoRoot, "hack", "operators", spec.hackDir)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		return nil, fmt.Errorf("find module %s for %s's CRDs (in %s): %w %s", spec.module, op, cmd.Dir, err, stderr)
	}
	dir := strings.TrimSpace(string(out))
	files := make([]string, 0, len(spec.crds))
	for _, f := range spec.crds {
		p := filepath.Join(dir, f)
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%s's CRD: %w", op, err)
		}
		files = append(files, p)
	}
	return files, nil
}

// StartOperators installs each operator's CRDs (replacing the minimal ones of
// test/crds) and starts it, waiting until it is ready. An operator already
// running in this cluster is left alone.
func (c *Cluster) StartOperators(ctx context.Context, ops ...Operator) error {
	for _, op := range ops {
		if slices.Contains(c.operators, op) {
			continue
		}
		if err := c.startOperator(ctx, op); err != nil {
			return fmt.Errorf("start %s: %w", op, err)
		}
		c.operators = append(c.operators, op)
	}
	return nil
}

// OperatorRunning reports whether op was started in this cluster.
func (c *Cluster) OperatorRunning(op Operator) bool { return slices.Contains(c.operators, op) }

func (c *Cluster) startOperator(ctx context.Context, op Operator) error {
	if c.opts.OperatorsDir == "" {
		return fmt.Errorf("no operators directory: set OperatorsDir (or --operators-dir) to what 'hack/tools.sh operators-dir' prints")
	}
	binary := filepath.Join(c.opts.OperatorsDir, string(op))
	if _, err := os.Stat(binary); err != nil {
		return fmt.Errorf("%s not found: build it with 'hack/tools.sh %s'", binary, op)
	}
	if c.opts.KoordQueue.RepoRoot == "" {
		return fmt.Errorf("KoordQueue.RepoRoot is not set: the operators' CRDs are found through hack/operators")
	}
	if op == TrainerController {
		// Its TrainJobs run as JobSets.
		if err := c.StartOperators(ctx, JobSetController); err != nil {
			return err
		}
	}
	began := time.Now()
	files, err := OperatorCRDFiles(ctx, c.opts.KoordQueue.RepoRoot, op)
	if err != nil {
		return err
	}
	if err := c.installCRDFiles(ctx, files); err != nil {
		return err
	}
	ports, err := proc.FreePorts(3)
	if err != nil {
		return err
	}
	addr := func(i int) string { return "127.0.0.1:" + strconv.Itoa(ports[i]) }
	env := []string{"KUBECONFIG=" + c.Kubeconfig}
	var p *process
	switch op {
	case TrainingOperator:
		if err := c.prepareTrainingOperator(ctx); err != nil {
			return err
		}
		p, err = c.runEnv(string(op), binary, env,
			"--kubeconfig", c.Kubeconfig,
			"--enable-scheme=tfjob", "--enable-scheme=pytorchjob",
			"--metrics-bind-address", addr(0),
			"--health-probe-bind-address", addr(1),
			"--webhook-server-port", strconv.Itoa(ports[2]),
		)
		if err != nil {
			return err
		}
		if err := c.mountTrainingOperatorCerts(ctx, p); err != nil {
			return err
		}
	case MPIOperator:
		// It always elects a leader (its Lease goes to kube-system) and
		// serves /healthz on :8080 whatever the flags say: one mpi-operator
		// per machine at a time. It watches every namespace.
		p, err = c.runEnv(string(op), binary, env,
			"--lock-namespace", "kube-system",
			"--threadiness", "2",
		)
	case KubeRayOperator:
		p, err = c.runEnv(string(op), binary, env,
			"--metrics-addr", addr(0),
			"--health-probe-bind-address", addr(1),
			"--enable-leader-election=false",
			"--log-stdout-encoder", "console",
		)
	case SparkOperator:
		p, err = c.runEnv(string(op), binary, env,
			"controller", "start",
			"--health-probe-bind-address", addr(1),
			"--controller-threads", "2",
		)
	case JobSetController:
		var config string
		if config, err = c.prepareJobSetController(ctx, ports[2], addr(1)); err != nil {
			return err
		}
		p, err = c.runEnv(string(op), binary, env, "--config", config, "--zap-devel=false")
	case LWSController:
		var config string
		if config, err = c.prepareLWSController(ctx, ports[2], addr(1)); err != nil {
			return err
		}
		p, err = c.runEnv(string(op), binary, env, "--config", config, "--zap-devel=false")
	case TrainerController:
		var config, tmpDir string
		if config, tmpDir, err = c.prepareTrainerController(ctx, ports[2], addr(1)); err != nil {
			return err
		}
		p, err = c.runEnv(string(op), binary, append(env, "TMPDIR="+tmpDir), "--config", config, "--zap-devel=false")
	case WorkflowController:
		if err := c.prepareWorkflowController(ctx); err != nil {
			return err
		}
		// One replica: no leader election. Its debug server takes :6060
		// whatever the flags say (a second cluster's only logs the clash).
		p, err = c.runEnv(string(op), binary, append(env, "LEADER_ELECTION_DISABLE=true", "ARGO_NAMESPACE="+argoNamespace),
			"--kubeconfig", c.Kubeconfig,
			"--namespace", argoNamespace,
			"--executor-image", "argoexec:local",
			"--workflow-workers", "4",
		)
	}
	if err != nil {
		return err
	}
	switch op {
	case WorkflowController:
		// It serves no probe on a port of ours: ready once it has taken its
		// lease-less start, seen in its log.
		err = c.waitFor(ctx, string(op)+" started", 2*time.Minute, func(context.Context) (bool, error) {
			return strings.Contains(tail(p.ref.Log, 200), "Starting Workflow Controller"), nil
		}, p)
	case MPIOperator:
		// Its probe port is fixed: ready once it leads, seen in its log.
		err = c.waitFor(ctx, string(op)+" leading", 2*time.Minute, func(context.Context) (bool, error) {
			return strings.Contains(tail(p.ref.Log, 200), "Leading started"), nil
		}, p)
	default:
		err = c.waitFor(ctx, string(op)+" readiness probe", 2*time.Minute, httpOK("http://"+addr(1)+"/readyz"), p)
	}
	if err != nil {
		return err
	}
	if endpoints := c.operatorWebhooks[op]; len(endpoints) > 0 {
		if err := c.waitFor(ctx, string(op)+"'s webhooks served", 2*time.Minute, webhooksServed(endpoints), p); err != nil {
			return err
		}
	}
	c.logf("%s ready in %s", op, time.Since(began).Round(100*time.Millisecond))
	return nil
}

// argoNamespace holds the workflow-controller's ConfigMap.
const argoNamespace = "argo"

// prepareWorkflowController creates its namespace and a ConfigMap that turns
// its metrics servers off (their fixed ports would clash between clusters).
func (c *Cluster) prepareWorkflowController(ctx context.Context) error {
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: argoNamespace}},
		&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "workflow-controller-configmap", Namespace: argoNamespace},
			Data: map[string]string{
				"metricsConfig":   "enabled: false\n",
				"telemetryConfig": "enabled: false\n",
			},
		},
	} {
		if err := c.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %T %s for the workflow-controller: %w", o, o.GetName(), err)
		}
	}
	return nil
}

// httpOK is a poll condition: url answers 200.
func httpOK(url string) func(context.Context) (bool, error) {
	hc := &http.Client{Timeout: time.Second}
	return func(context.Context) (bool, error) {
		resp, err := hc.Get(url)
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Errorf("%s: %s", url, resp.Status)
		}
		return true, nil
	}
}

// installCRDFiles applies the CRDs of files and waits until they are served.
func (c *Cluster) installCRDFiles(ctx context.Context, files []string) error {
	dir, err := os.MkdirTemp(c.opts.StateDir, "crds-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	for _, f := range files {
		if err := os.Symlink(f, filepath.Join(dir, filepath.Base(f))); err != nil {
			return err
		}
	}
	return c.InstallCRDs(ctx, dir)
}

// The training operator's webhook certificates. It will not start its
// controllers before its cert rotator has filled this Secret, injected the CA
// into this configuration, and found the files in its certDir, a constant
// that in a pod is the Secret's mount.
const (
	trainingOperatorNamespace = "kubeflow"
	trainingOperatorSecret    = "training-operator-webhook-cert"
	trainingOperatorWebhook   = "validator.training-operator.kubeflow.org"
	trainingOperatorCertDir   = "/tmp/k8s-webhook-server/serving-certs"
)

// prepareTrainingOperator creates what the rotator updates: the namespace, an
// empty Secret and a ValidatingWebhookConfiguration with no webhooks, so the
// API server never calls the operator's (unreachable) webhook.
func (c *Cluster) prepareTrainingOperator(ctx context.Context) error {
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: trainingOperatorNamespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: trainingOperatorSecret, Namespace: trainingOperatorNamespace}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: trainingOperatorWebhook}},
	} {
		if err := c.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %T %s for the training operator: %w", o, o.GetName(), err)
		}
	}
	return nil
}

// mountTrainingOperatorCerts does what the Secret's volume mount does in a
// pod: it waits for the rotator to fill the Secret and writes its files into
// the operator's certDir.
func (c *Cluster) mountTrainingOperatorCerts(ctx context.Context, p *process) error {
	secret := &corev1.Secret{}
	err := c.waitFor(ctx, "the training operator's webhook certificate", time.Minute, func(ctx context.Context) (bool, error) {
		if err := c.Client.Get(ctx, keyOf(trainingOperatorNamespace, trainingOperatorSecret), secret); err != nil {
			return false, err
		}
		for _, k := range []string{"tls.crt", "tls.key", "ca.crt"} {
			if len(secret.Data[k]) == 0 {
				return false, fmt.Errorf("secret has no %s yet", k)
			}
		}
		return true, nil
	}, p)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(trainingOperatorCertDir, 0o700); err != nil {
		return err
	}
	// The key first and the certificate last: the rotator looks for tls.crt.
	for _, k := range []string{"tls.key", "ca.crt", "tls.crt"} {
		tmp := filepath.Join(trainingOperatorCertDir, "."+k+".tmp")
		if err := os.WriteFile(tmp, secret.Data[k], 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(trainingOperatorCertDir, k)); err != nil {
			return err
		}
	}
	return nil
}

// runEnv is run with env added to the process's environment.
func (c *Cluster) runEnv(name, binary string, env []string, args ...string) (*process, error) {
	p, err := startProcessEnv(c.opts.StateDir, name, binary, env, args, c.opts.DieWithParent)
	if err != nil {
		return nil, err
	}
	c.procs = append(c.procs, p)
	c.state.Processes = append(c.state.Processes, p.ref)
	if err := writeState(c.opts.StateDir, &c.state); err != nil {
		return nil, fmt.Errorf("record process %s: %w", name, err)
	}
	return p, nil
}
