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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/test/cluster"
)

var (
	trainJobGVK       = schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: "TrainJob"}
	clusterRuntimeGVK = schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: "ClusterTrainingRuntime"}
)

// e2eRuntime is the suite's ClusterTrainingRuntime: one trainer step whose
// node container asks 100m and 1Gi, no ML policy (the trainer's plain one).
const e2eRuntime = "kq-e2e-small"

// ensureRuntime creates e2eRuntime once the trainer controller (whose
// webhook validates runtimes) runs.
func ensureRuntime(t *testing.T) {
	t.Helper()
	rt := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"replicatedJobs": []any{map[string]any{
			"name": "node", "replicas": int64(1),
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
				"spec": map[string]any{"backoffLimit": int64(0), "template": map[string]any{"spec": map[string]any{
					"restartPolicy": "Never",
					"containers": []any{map[string]any{
						"name": "node", "image": "busybox:stable",
						"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "1Gi"}},
					}},
				}}},
			},
		}},
	}}}}}
	rt.SetGroupVersionKind(clusterRuntimeGVK)
	rt.SetName(e2eRuntime)
	if err := env.Client.Create(ctxFor(t), rt); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create ClusterTrainingRuntime %s: %v", e2eRuntime, err)
	}
}

// trainJobUnits lists units whose consumer is the TrainJob's JobSet or one of
// its Jobs: the TrainJob's unit charges them, so there must be none.
func trainJobUnits(ctx context.Context, name string) ([]string, error) {
	units := &schedv1alpha1.QueueUnitList{}
	if err := env.Client.List(ctx, units, client.InNamespace("default")); err != nil {
		return nil, err
	}
	var out []string
	for _, u := range units.Items {
		ref := u.Spec.ConsumerRef
		if ref != nil && (ref.Kind == "JobSet" && ref.Name == name || ref.Kind == "Job" && strings.HasPrefix(ref.Name, name+"-")) {
			out = append(out, u.Name)
		}
	}
	return out, nil
}

// trainJobCase is a TrainJob of one node on e2eRuntime, asking for cpu per
// node (spec.trainer.resourcesPerNode: the unit must take it from there, not
// from the runtime's 100m), its pod completing after runFor (a
// podTemplateOverride's annotation), submitted with the quota label only:
// the webhook sets spec.suspend.
func trainJobCase() operatorCase {
	return operatorCase{
		op:        cluster.TrainerController,
		gvk:       trainJobGVK,
		extension: "trainjob",
		build: func(name, quota, cpu string, runFor time.Duration) *unstructured.Unstructured {
			return newObject(trainJobGVK, name, quota, map[string]any{
				"runtimeRef": map[string]any{"name": e2eRuntime, "kind": "ClusterTrainingRuntime"},
				"trainer": map[string]any{
					"numNodes":         int64(1),
					"resourcesPerNode": map[string]any{"requests": map[string]any{"cpu": cpu, "memory": "1Gi"}},
				},
				"podTemplateOverrides": []any{map[string]any{
					"targetJobs": []any{map[string]any{"name": "node"}},
					"metadata":   map[string]any{"annotations": map[string]any{"pod-complete.stage.kwok.x-k8s.io/delay": runFor.String()}},
				}},
			})
		},
		suspended: []string{"spec", "suspend"},
		seen: func(u *unstructured.Unstructured) error {
			if condition(u, "Suspended") != "True" {
				return errors.New("no Suspended condition yet")
			}
			return nil
		},
		running: func(u *unstructured.Unstructured) error {
			ctx := context.Background()
			if units, err := trainJobUnits(ctx, u.GetName()); err != nil || len(units) > 0 {
				return errors.Join(err, fmt.Errorf("the TrainJob's JobSet or Jobs have units of their own: %v", units))
			}
			pods, err := podsOf(ctx, operatorCase{}, u.GetName())
			if err != nil {
				return err
			}
			for _, p := range pods {
				if got := p.Labels[schedv1alpha1.QueueUnitLabel]; got != u.GetName()+"-trainjob" {
					return fmt.Errorf("pod %s has unit label %q", p.Name, got)
				}
			}
			if condition(u, "Complete") == "True" {
				return nil
			}
			jobs, _, _ := unstructured.NestedSlice(u.Object, "status", "jobsStatus")
			for _, j := range jobs {
				m, _ := j.(map[string]any)
				if n, _ := m["active"].(int64); n > 0 {
					return nil
				}
			}
			return errors.New("no active Job yet")
		},
		succeeded: func(u *unstructured.Unstructured) (bool, error) {
			if condition(u, "Failed") == "True" {
				return false, fmt.Errorf("%s failed", u.GetName())
			}
			return condition(u, "Complete") == "True", nil
		},
	}
}

// TestTrainerTrainJob runs TrainJobs with the stock trainer controller (and
// the jobset controller it needs): held with no pod, its unit sized from
// resourcesPerNode, admitted, its pod runs labelled with its unit, it
// completes; evicted, it is suspended and its pods go, admitted again it
// completes. numNodes raised while it runs: held, and never more than its
// admitted pods run (see trainJobGrows).
func TestTrainerTrainJob(t *testing.T) {
	t.Parallel()
	needOperator(t, cluster.TrainerController)
	ensureRuntime(t)
	runOperatorCase(t, trainJobCase(), "op-tj")
	t.Run("SizedFromTheTrainJob", func(t *testing.T) {
		unit := &schedv1alpha1.QueueUnit{}
		if err := get(ctxFor(t), "default", "op-tj-held-trainjob", unit); err != nil {
			t.Fatal(err)
		}
		got := unit.Spec.Resource[corev1.ResourceCPU]
		if got.String() != "2" {
			t.Errorf("unit asks %s cpu, want the 2 of resourcesPerNode", got.String())
		}
	})
	t.Run("GrowthHeldAtAdmission", func(t *testing.T) { trainJobGrows(t, trainJobCase(), "op-tj-grow") })
}

// trainJobGrows raises a running TrainJob's numNodes from 1 to 2. The
// extension holds it (spec.suspend, JobGrew), but the trainer cannot pass the
// suspension on: it applies the suspension and the new size to the running
// JobSet in one write, which the jobset controller's webhook refuses
// (replicatedJobs change only while suspended). So its one admitted pod runs
// on, never a second; the unit keeps its admission while it runs, and the
// TrainJob completes at its admitted size, its unit Succeed.
func trainJobGrows(t *testing.T, oc operatorCase, name string) {
	unit := name + "-" + oc.extension
	elasticQuota(t, name, "8", "8Gi", nil)
	create(t, oc.build(name, name, "1", 20*time.Second))
	waitPhase(t, "default", unit, "admitted", admitted)
	waitPodsRunning(t, oc, name)
	eventually(t, "numNodes of "+name+" raised to 2", func(ctx context.Context) (bool, error) {
		u, err := oc.get(ctx, name)
		if err != nil {
			return false, err
		}
		if err := unstructured.SetNestedField(u.Object, int64(2), "spec", "trainer", "numNodes"); err != nil {
			return false, err
		}
		return true, env.Client.Update(ctx, u)
	})
	eventually(t, name+" held: JobGrew on its unit, spec.suspend", func(ctx context.Context) (bool, error) {
		if ok, err := hasEvent(ctx, "default", unit, "JobGrew"); err != nil || !ok {
			return false, err
		}
		return nativeSuspended(ctx, oc, name)
	})
	samples := 0
	var violation error
	eventuallyWithin(t, 2*timeout, name+" completes at its admitted size", func(ctx context.Context) (bool, error) {
		pods, err := podsOf(ctx, oc, name)
		if err != nil {
			return false, err
		}
		active := 0
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodPending {
				active++
			}
		}
		u := &schedv1alpha1.QueueUnit{}
		if err := get(ctx, "default", unit, u); err != nil {
			return false, err
		}
		samples++
		if active > 1 && violation == nil {
			violation = fmt.Errorf("%d pods of %s active, 1 admitted", active, name)
		}
		if active > 0 && (!admitted(u.Status.Phase) || len(u.Status.Admissions) != 1 || u.Status.Admissions[0].Replicas != 1) && violation == nil {
			violation = fmt.Errorf("with %d pods active, unit %s is %s with admissions %+v", active, unit, u.Status.Phase, u.Status.Admissions)
		}
		tj, err := oc.get(ctx, name)
		if err != nil {
			return false, err
		}
		return oc.succeeded(tj)
	})
	if violation != nil {
		t.Error(violation)
	}
	if samples == 0 {
		t.Fatal("no sample taken while the grown TrainJob ran")
	}
	waitPhase(t, "default", unit, "Succeed", isPhase(schedv1alpha1.QueueUnitPhaseSucceed))
}
