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

package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/test/cluster"
)

// The operator cases share the suite's cluster; each starts the stock
// operator it needs the first time (cluster.StartOperators), so the rest of
// the suite runs without them.
var operatorsMu sync.Mutex

func needOperator(t *testing.T, op cluster.Operator) {
	t.Helper()
	operatorsMu.Lock()
	defer operatorsMu.Unlock()
	if err := env.StartOperators(ctxFor(t), op); err != nil {
		t.Fatalf("%v\n(build the operators with 'hack/tools.sh %s'; make test-e2e does)", err, op)
	}
}

// operatorCase describes one kind run by its stock operator.
type operatorCase struct {
	op        cluster.Operator
	gvk       schema.GroupVersionKind
	extension string // the unit is <name>-<extension>
	// build returns the job as the guide writes it (the quota label, and the
	// guide's own suspension form only where it has one: the webhook sets the
	// native field), each pod asking for cpu and running for runFor.
	build func(name, quota, cpu string, runFor time.Duration) *unstructured.Unstructured
	// suspended reads the native field the operator obeys.
	suspended []string
	// seen reports that the operator has reconciled the held job (so that no
	// pod while waiting means it obeyed, not that it had not looked yet).
	seen func(u *unstructured.Unstructured) error
	// running reports that the operator says the admitted job runs.
	running func(u *unstructured.Unstructured) error
	// succeeded reports that the operator says the job completed; nil for a
	// kind that cannot complete here (see docs/protocol.md).
	succeeded func(u *unstructured.Unstructured) (bool, error)
	// evict, when set, replaces the eviction case for an operator whose
	// suspension does not stop running pods (see docs/protocol.md).
	evict func(t *testing.T, oc operatorCase, name string)
}

func (oc operatorCase) get(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(oc.gvk)
	return u, get(ctx, "default", name, u)
}

// runOperatorCase proves on the shared cluster, with the stock operator
// running: a held job creates no pod while its unit waits; once admitted its
// pods run, it completes and its unit ends Succeed; evicted by preemption its
// pods go away, it is suspended by its native field, its unit is Enqueued
// again, and it later completes.
func runOperatorCase(t *testing.T, oc operatorCase, prefix string) {
	needOperator(t, oc.op)
	t.Run("HeldThenAdmitted", func(t *testing.T) { heldThenAdmitted(t, oc, prefix+"-held") })
	t.Run("EvictedAndRequeued", func(t *testing.T) {
		if oc.evict != nil {
			oc.evict(t, oc, prefix+"-evict")
			return
		}
		evictedAndRequeued(t, oc, prefix+"-evict")
	})
}

func heldThenAdmitted(t *testing.T, oc operatorCase, name string) {
	unit := name + "-" + oc.extension
	// A quota too small for the job: the unit waits until it is raised.
	quota := name
	elasticQuota(t, quota, "1", "8Gi", nil)
	create(t, oc.build(name, quota, "2", 2*time.Second))

	waitPhase(t, "default", unit, "enqueued (the quota is too small)", isPhase(schedv1alpha1.QueueUnitPhaseEnqueued))
	eventually(t, string(oc.op)+" has seen the held "+name, func(ctx context.Context) (bool, error) {
		u, err := oc.get(ctx, name)
		if err != nil {
			return false, err
		}
		return oc.seen(u) == nil, oc.seen(u)
	})
	samples := 0
	consistently(t, hold, name+" held: unit Enqueued, natively suspended, no pod", func(ctx context.Context) error {
		samples++
		return stillHeld(ctx, oc, name, unit)
	})
	if samples == 0 {
		t.Fatal("no sample taken while the job was held")
	}

	raiseQuota(t, quota, "8")
	waitPhase(t, "default", unit, "admitted once the quota is raised", admitted)
	eventually(t, name+" released by its native field", func(ctx context.Context) (bool, error) {
		s, err := nativeSuspended(ctx, oc, name)
		return err == nil && !s, err
	})
	waitPodsRunning(t, oc, name)
	waitSucceeded(t, oc, name, unit)
}

func evictedAndRequeued(t *testing.T, oc operatorCase, name string) {
	unit := name + "-" + oc.extension
	high := admitThenPreempt(t, oc, name)
	eventually(t, name+" evicted: natively suspended, unit Enqueued", func(ctx context.Context) (bool, error) {
		if s, err := nativeSuspended(ctx, oc, name); err != nil || !s {
			return false, errors.Join(err, fmt.Errorf("native suspend %v", s))
		}
		if p, err := phaseOf(ctx, "default", unit); err != nil || p != schedv1alpha1.QueueUnitPhaseEnqueued {
			return false, errors.Join(err, fmt.Errorf("phase %q", p))
		}
		return true, nil
	})
	eventually(t, "the pods of "+name+" gone", func(ctx context.Context) (bool, error) {
		pods, err := podsOf(ctx, oc, name)
		if err != nil {
			return false, err
		}
		if len(pods) > 0 {
			return false, fmt.Errorf("%d pods left, first %s (%s)", len(pods), pods[0].Name, pods[0].Status.Phase)
		}
		return true, nil
	})
	if ok, err := hasEvent(ctxFor(t), "default", unit, "Preempted"); err != nil || !ok {
		t.Errorf("no Preempted event on %s (err %v)", unit, err)
	}
	eventually(t, "the high job completes", func(ctx context.Context) (bool, error) { return jobComplete(ctx, "default", high.Name) })
	waitPhase(t, "default", unit, "admitted again", admitted)
	waitPodsRunning(t, oc, name)
	waitSucceeded(t, oc, name, unit)
}

// evictedAfterRunningStep is the eviction of a Workflow: Argo's spec.suspend
// starts no new step but lets a running one finish, so the evicted workflow
// keeps its quota while its pod runs (the preemptor waits: no quota is ever
// over its max), and gives it back when the pod ends; the workflow then
// completes (its only step is done) and its unit ends Succeed.
func evictedAfterRunningStep(t *testing.T, oc operatorCase, name string) {
	unit := name + "-" + oc.extension
	high := admitThenPreempt(t, oc, name)
	eventually(t, name+" suspended by spec.suspend", func(ctx context.Context) (bool, error) {
		return nativeSuspended(ctx, oc, name)
	})
	runningSamples := 0
	var violation error
	eventually(t, "the running step of "+name+" ends", func(ctx context.Context) (bool, error) {
		pods, err := podsOf(ctx, oc, name)
		if err != nil {
			return false, err
		}
		running := 0
		for i := range pods {
			if pods[i].Status.Phase == corev1.PodRunning || pods[i].Status.Phase == corev1.PodPending {
				running++
			}
		}
		if running == 0 {
			return true, nil
		}
		p, err := phaseOf(ctx, "default", unit)
		if err != nil {
			return false, err
		}
		hp, err := phaseOf(ctx, "default", high.Name)
		if err != nil {
			return false, err
		}
		runningSamples++
		if (p == schedv1alpha1.QueueUnitPhaseEnqueued || admitted(hp)) && violation == nil {
			violation = fmt.Errorf("with %d pods of %s running, its unit is %q and the preemptor's %q", running, name, p, hp)
		}
		return false, nil
	})
	if runningSamples == 0 {
		t.Fatal("no sample taken while the evicted step ran")
	}
	if violation != nil {
		t.Fatalf("quota given away while the evicted workflow's pod ran: %v", violation)
	}
	if ok, err := hasEvent(ctxFor(t), "default", unit, "Preempted"); err != nil || !ok {
		t.Errorf("no Preempted event on %s (err %v)", unit, err)
	}
	waitPhase(t, "default", high.Name, "admitted once the step ended", admitted)
	eventually(t, "the high job completes", func(ctx context.Context) (bool, error) { return jobComplete(ctx, "default", high.Name) })
	waitSucceeded(t, oc, name, unit)
}

// admitThenPreempt runs the job under a quota that opts into preemption and
// sends a higher-priority batch Job that can only fit by evicting it; it
// returns the preemptor.
func admitThenPreempt(t *testing.T, oc operatorCase, name string) *batchv1.Job {
	unit := name + "-" + oc.extension
	quota := name
	q := &eqv1alpha1.ElasticQuota{
		ObjectMeta: metav1.ObjectMeta{Name: quota, Namespace: "default", Annotations: map[string]string{
			schedv1alpha1.PreemptionPolicyAnnotation: string(schedv1alpha1.PreemptionLowerPriority),
		}},
		Spec: eqv1alpha1.ElasticQuotaSpec{Max: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("32Gi"),
		}},
	}
	create(t, q)
	eventually(t, "Queue "+quota+" with its preemption policy", func(ctx context.Context) (bool, error) {
		queue := &schedv1alpha1.Queue{}
		if err := get(ctx, schedv1alpha1.QueueNamespace, quota, queue); err != nil {
			return false, err
		}
		return queue.Annotations[schedv1alpha1.PreemptionPolicyAnnotation] == string(schedv1alpha1.PreemptionLowerPriority), nil
	})
	// Its pods run long enough to be running when the protection period
	// (5s) ends, and short enough to finish after it is admitted again.
	low := oc.build(name, quota, "3", 20*time.Second)
	annotations := low.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[schedv1alpha1.PriorityAnnotation] = "0"
	low.SetAnnotations(annotations)
	create(t, low)
	waitPhase(t, "default", unit, "admitted", admitted)
	waitPodsRunning(t, oc, name)

	// Named so that its pods do not start with the evicted job's name.
	high := suspendedJob(strings.Replace(name, "-evict", "-preemptor", 1), quota, "2", 2*time.Second)
	high.Annotations = map[string]string{schedv1alpha1.PriorityAnnotation: "100"}
	create(t, high)
	eventually(t, name+" chosen as the victim", func(ctx context.Context) (bool, error) {
		return hasEvent(ctx, "default", unit, "Preempted")
	})
	return high
}

// stillHeld fails when the job has a pod, is not natively suspended or its
// unit left Enqueued.
func stillHeld(ctx context.Context, oc operatorCase, name, unit string) error {
	pods, err := podsOf(ctx, oc, name)
	if err != nil {
		return err
	}
	if len(pods) > 0 {
		return fmt.Errorf("pod %s exists (%s) while the unit waits", pods[0].Name, pods[0].Status.Phase)
	}
	if s, err := nativeSuspended(ctx, oc, name); err != nil || !s {
		return errors.Join(err, fmt.Errorf("native suspend %v", s))
	}
	if p, err := phaseOf(ctx, "default", unit); err != nil || p != schedv1alpha1.QueueUnitPhaseEnqueued {
		return errors.Join(err, fmt.Errorf("phase %q", p))
	}
	return nil
}

func nativeSuspended(ctx context.Context, oc operatorCase, name string) (bool, error) {
	u, err := oc.get(ctx, name)
	if err != nil {
		return false, err
	}
	s, _, err := unstructured.NestedBool(u.Object, oc.suspended...)
	return s, err
}

// podsOf lists the pods of a job: every operator names its pods (and those
// of the objects it makes, such as a RayJob's RayCluster) after the job, and
// no other object of the operator cases starts with a job's name.
func podsOf(ctx context.Context, _ operatorCase, name string) ([]corev1.Pod, error) {
	pods := &corev1.PodList{}
	if err := env.Client.List(ctx, pods, client.InNamespace("default")); err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range pods.Items {
		if p.Name == name || strings.HasPrefix(p.Name, name+"-") {
			out = append(out, p)
		}
	}
	return out, nil
}

// waitPodsRunning waits for a Running pod of the job on a kwok node, and for
// the operator to say the job runs.
func waitPodsRunning(t *testing.T, oc operatorCase, name string) {
	t.Helper()
	if oc.running != nil {
		defer eventually(t, string(oc.op)+" says "+name+" runs", func(ctx context.Context) (bool, error) {
			u, err := oc.get(ctx, name)
			if err != nil {
				return false, err
			}
			err = oc.running(u)
			return err == nil, err
		})
	}
	eventually(t, "a Running pod of "+name+" on a kwok node", func(ctx context.Context) (bool, error) {
		pods, err := podsOf(ctx, oc, name)
		if err != nil {
			return false, err
		}
		var phases []string
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning && strings.HasPrefix(p.Spec.NodeName, "kwok-node-") {
				return true, nil
			}
			phases = append(phases, p.Name+"="+string(p.Status.Phase))
		}
		return false, fmt.Errorf("pods %v", phases)
	})
}

func waitSucceeded(t *testing.T, oc operatorCase, name, unit string) {
	t.Helper()
	if oc.succeeded == nil {
		return
	}
	eventuallyWithin(t, 2*timeout, string(oc.op)+" reports "+name+" completed", func(ctx context.Context) (bool, error) {
		u, err := oc.get(ctx, name)
		if err != nil {
			return false, err
		}
		return oc.succeeded(u)
	})
	waitPhase(t, "default", unit, "Succeed", isPhase(schedv1alpha1.QueueUnitPhaseSucceed))
}

// raiseQuota sets the ElasticQuota's max CPU.
func raiseQuota(t *testing.T, name, cpu string) {
	t.Helper()
	eventually(t, "raise quota "+name, func(ctx context.Context) (bool, error) {
		q := &eqv1alpha1.ElasticQuota{}
		if err := get(ctx, "default", name, q); err != nil {
			return false, err
		}
		q.Spec.Max[corev1.ResourceCPU] = resource.MustParse(cpu)
		return true, env.Client.Update(ctx, q)
	})
}

// condition returns the status of a condition of type typ in status.conditions.
func condition(u *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// podTemplate is a pod template whose one container (named container, as the
// operator wants it) asks for cpu and runs for runFor on its fake node (0:
// the cluster's default, or forever for pods that never complete).
func podTemplate(container, cpu string, runFor time.Duration) map[string]any {
	meta := map[string]any{}
	if runFor > 0 {
		meta["annotations"] = map[string]any{"pod-complete.stage.kwok.x-k8s.io/delay": runFor.String()}
	}
	return map[string]any{
		"metadata": meta,
		"spec": map[string]any{
			"containers": []any{map[string]any{
				"name":  container,
				"image": "busybox:stable",
				"resources": map[string]any{"requests": map[string]any{
					"cpu": cpu, "memory": "1Gi",
				}},
			}},
		},
	}
}

func newObject(gvk schema.GroupVersionKind, name, quota string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(gvk)
	u.SetName(name)
	u.SetNamespace("default")
	u.SetLabels(map[string]string{schedv1alpha1.QuotaNameLabel: quota})
	return u
}

// kubeflowCase is a TFJob or PyTorchJob with one replica of type replica,
// submitted with the quota label only: the webhook sets spec.runPolicy.suspend.
func kubeflowCase(gvk schema.GroupVersionKind, extension, specsField, replica, container string) operatorCase {
	return operatorCase{
		op:        cluster.TrainingOperator,
		gvk:       gvk,
		extension: extension,
		build: func(name, quota, cpu string, runFor time.Duration) *unstructured.Unstructured {
			return newObject(gvk, name, quota, map[string]any{
				specsField: map[string]any{replica: map[string]any{
					"replicas":      int64(1),
					"restartPolicy": "Never",
					"template":      podTemplate(container, cpu, runFor),
				}},
			})
		},
		suspended: []string{"spec", "runPolicy", "suspend"},
		seen: func(u *unstructured.Unstructured) error {
			if condition(u, "Suspended") != "True" {
				return errors.New("no Suspended condition yet")
			}
			return nil
		},
		succeeded: func(u *unstructured.Unstructured) (bool, error) {
			if condition(u, "Failed") == "True" {
				return false, fmt.Errorf("%s failed", u.GetName())
			}
			return condition(u, "Succeeded") == "True", nil
		},
	}
}

// TestTrainingOperatorTFJob runs TFJobs with the stock training operator.
func TestTrainingOperatorTFJob(t *testing.T) {
	t.Parallel()
	runOperatorCase(t, kubeflowCase(tfJobGVK, "tfjob", "tfReplicaSpecs", "Worker", "tensorflow"), "op-tf")
}

// TestTrainingOperatorPyTorchJob runs PyTorchJobs with the stock training
// operator.
func TestTrainingOperatorPyTorchJob(t *testing.T) {
	t.Parallel()
	runOperatorCase(t, kubeflowCase(pytorchJobGVK, "pytorchjob", "pytorchReplicaSpecs", "Master", "pytorch"), "op-pt")
}

var (
	rayClusterGVK = schema.GroupVersionKind{Group: "ray.io", Version: "v1", Kind: "RayCluster"}
	rayJobGVK     = schema.GroupVersionKind{Group: "ray.io", Version: "v1", Kind: "RayJob"}
)

// rayClusterSpec is a head asking for cpu and one worker asking for one CPU.
// Ray's pods serve until stopped, and so they do on the fake nodes (the
// cluster's kwok stages complete no pod owned by a RayCluster).
func rayClusterSpec(cpu string) map[string]any {
	return map[string]any{
		"headGroupSpec": map[string]any{
			"rayStartParams": map[string]any{},
			"template":       podTemplate("ray-head", cpu, 0),
		},
		"workerGroupSpecs": []any{map[string]any{
			"groupName":      "workers",
			"replicas":       int64(1),
			"minReplicas":    int64(1),
			"maxReplicas":    int64(1),
			"rayStartParams": map[string]any{},
			"template":       podTemplate("ray-worker", "1", 0),
		}},
	}
}

// TestKubeRayRayCluster runs RayClusters with the stock KubeRay operator. A
// RayCluster serves until deleted, so it never completes: the case proves the
// hold, the start on admission and the eviction, and that the cluster comes
// back when admitted again.
func TestKubeRayRayCluster(t *testing.T) {
	t.Parallel()
	runOperatorCase(t, operatorCase{
		op:        cluster.KubeRayOperator,
		gvk:       rayClusterGVK,
		extension: "raycluster",
		build: func(name, quota, cpu string, _ time.Duration) *unstructured.Unstructured {
			return newObject(rayClusterGVK, name, quota, rayClusterSpec(cpu))
		},
		suspended: []string{"spec", "suspend"},
		seen: func(u *unstructured.Unstructured) error {
			if condition(u, "RayClusterSuspended") != "True" {
				return errors.New("no RayClusterSuspended condition yet")
			}
			return nil
		},
		running: func(u *unstructured.Unstructured) error {
			if s, _, _ := unstructured.NestedString(u.Object, "status", "state"); s != "ready" {
				return fmt.Errorf("state %q", s)
			}
			return nil
		},
	}, "op-rc")
}

// TestKubeRayRayJob runs RayJobs with the stock KubeRay operator. It cannot
// prove completion here: KubeRay never learns the Ray job's end on fake nodes.
func TestKubeRayRayJob(t *testing.T) {
	t.Parallel()
	runOperatorCase(t, operatorCase{
		op:        cluster.KubeRayOperator,
		gvk:       rayJobGVK,
		extension: "rayjob",
		build: func(name, quota, cpu string, runFor time.Duration) *unstructured.Unstructured {
			return newObject(rayJobGVK, name, quota, map[string]any{
				// KubeRay refuses (ValidationFailed, for good) a suspended
				// RayJob that keeps its cluster after the job.
				"shutdownAfterJobFinishes": true,
				"entrypoint":               "python -c 'print(1)'",
				"rayClusterSpec":           rayClusterSpec(cpu),
				"submitterPodTemplate": map[string]any{
					"metadata": map[string]any{"annotations": map[string]any{
						"pod-complete.stage.kwok.x-k8s.io/delay": runFor.String(),
					}},
					"spec": map[string]any{
						"restartPolicy": "Never",
						"containers": []any{map[string]any{
							"name":  "submitter",
							"image": "busybox:stable",
							"resources": map[string]any{"requests": map[string]any{
								"cpu": "100m", "memory": "128Mi",
							}},
						}},
					},
				},
			})
		},
		suspended: []string{"spec", "suspend"},
		seen: func(u *unstructured.Unstructured) error {
			s, _, _ := unstructured.NestedString(u.Object, "status", "jobDeploymentStatus")
			if s != "Suspended" && s != "New" {
				return fmt.Errorf("jobDeploymentStatus %q", s)
			}
			return nil
		},
		running: func(u *unstructured.Unstructured) error {
			if s, _, _ := unstructured.NestedString(u.Object, "status", "jobDeploymentStatus"); s != "Running" {
				return fmt.Errorf("jobDeploymentStatus %q", s)
			}
			return nil
		},
		// No succeeded: under kwok KubeRay never learns the Ray job's end
		// (docs/protocol.md).
	}, "op-rj")
}

var (
	sparkAppGVK = schema.GroupVersionKind{Group: "sparkoperator.k8s.io", Version: "v1beta2", Kind: "SparkApplication"}
)

// TestSparkOperatorSparkApplication runs a SparkApplication, as the guide
// writes it (the quota label and the suspend annotation), with the stock
// spark-operator v2. Its driver pod comes from spark-submit, which needs a
// JVM and Spark and cannot run here (docs/protocol.md), so the case proves what
// the operator does on its own: it keeps the held application SUSPENDED and
// submits nothing while the unit waits, and it moves on from SUSPENDED once the
// unit is admitted and the native field cleared.
func TestSparkOperatorSparkApplication(t *testing.T) {
	t.Parallel()
	oc := operatorCase{op: cluster.SparkOperator, gvk: sparkAppGVK, extension: "sparkapp", suspended: []string{"spec", "suspend"}}
	needOperator(t, oc.op)
	name := "op-spark-held"
	unit := name + "-" + oc.extension
	elasticQuota(t, name, "1", "8Gi", nil)
	app := newObject(sparkAppGVK, name, name, map[string]any{
		"type":                "Scala",
		"mode":                "cluster",
		"image":               "spark:3.5.3",
		"mainClass":           "org.apache.spark.examples.SparkPi",
		"mainApplicationFile": "local:///opt/spark/examples/jars/spark-examples.jar",
		"sparkVersion":        "3.5.3",
		"driver":              map[string]any{"cores": int64(1), "coreRequest": "2", "memory": "512m"},
		"executor":            map[string]any{"instances": int64(1), "cores": int64(1), "memory": "512m"},
	})
	app.SetAnnotations(map[string]string{schedv1alpha1.SuspendAnnotation: "true"})
	create(t, app)

	waitPhase(t, "default", unit, "enqueued (the quota is too small)", isPhase(schedv1alpha1.QueueUnitPhaseEnqueued))
	state := func(ctx context.Context) (string, error) {
		u, err := oc.get(ctx, name)
		if err != nil {
			return "", err
		}
		s, _, _ := unstructured.NestedString(u.Object, "status", "applicationState", "state")
		return s, nil
	}
	eventually(t, "spark-operator keeps "+name+" SUSPENDED", func(ctx context.Context) (bool, error) {
		s, err := state(ctx)
		return s == "SUSPENDED", err
	})
	samples := 0
	consistently(t, hold, name+" held: SUSPENDED, natively suspended, unit Enqueued, no pod", func(ctx context.Context) error {
		samples++
		if s, err := state(ctx); err != nil || s != "SUSPENDED" {
			return errors.Join(err, fmt.Errorf("application state %q while the unit waits", s))
		}
		return stillHeld(ctx, oc, name, unit)
	})
	if samples == 0 {
		t.Fatal("no sample taken while the application was held")
	}

	raiseQuota(t, name, "8")
	// Admitted, the application is resumed and its submission fails at once
	// (no spark-submit here), so the unit may pass through Dequeued to Failed
	// between two polls: its admission time says it was admitted.
	eventually(t, "QueueUnit "+unit+" admitted once the quota is raised", func(ctx context.Context) (bool, error) {
		u := &schedv1alpha1.QueueUnit{}
		if err := get(ctx, "default", unit, u); err != nil {
			return false, err
		}
		if u.Status.LastAllocateTime != nil && (admitted(u.Status.Phase) || u.Status.Phase == schedv1alpha1.QueueUnitPhaseFailed) {
			return true, nil
		}
		return false, fmt.Errorf("phase %q, allocated %v", u.Status.Phase, u.Status.LastAllocateTime)
	})
	eventually(t, "spark-operator resumes "+name+" (leaves SUSPENDED)", func(ctx context.Context) (bool, error) {
		s, err := state(ctx)
		return s != "" && s != "SUSPENDED" && s != "SUSPENDING", err
	})
}

// TestArgoWorkflow runs Workflows, as the guide writes them (a
// koord-queue-suspend template and spec.suspend), with Argo's stock
// workflow-controller.
func TestArgoWorkflow(t *testing.T) {
	t.Parallel()
	runOperatorCase(t, operatorCase{
		op:        cluster.WorkflowController,
		gvk:       workflowGVK,
		extension: "workflow",
		build: func(name, quota, cpu string, runFor time.Duration) *unstructured.Unstructured {
			main := podTemplate("main", cpu, runFor)
			c := main["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
			delete(c, "name")
			// Argo must know the command: it cannot look into the image.
			c["command"] = []any{"sh", "-c", "true"}
			u := newObject(workflowGVK, name, quota, map[string]any{
				"suspend":    true,
				"entrypoint": "main",
				"templates": []any{
					map[string]any{"name": "koord-queue-suspend", "suspend": map[string]any{}},
					map[string]any{"name": "main", "metadata": main["metadata"], "container": c},
				},
			})
			// As the guide: the demand is the annotation, not the templates.
			u.SetAnnotations(map[string]string{"koord-queue/min-resources": "cpu: " + cpu + "\nmemory: 1Gi\n"})
			return u
		},
		suspended: []string{"spec", "suspend"},
		seen: func(u *unstructured.Unstructured) error {
			s, _, _ := unstructured.NestedString(u.Object, "status", "phase")
			if s == "" {
				return errors.New("no status.phase yet")
			}
			return nil
		},
		succeeded: func(u *unstructured.Unstructured) (bool, error) {
			s, _, _ := unstructured.NestedString(u.Object, "status", "phase")
			msg, _, _ := unstructured.NestedString(u.Object, "status", "message")
			switch s {
			case "Succeeded":
				return true, nil
			case "Failed", "Error":
				return false, fmt.Errorf("%s: %s", s, msg)
			}
			return false, fmt.Errorf("phase %q", s)
		},
		evict: evictedAfterRunningStep,
	}, "op-wf")
}
