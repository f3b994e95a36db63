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

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/test/cluster"
)

var jobSetGVK = schema.GroupVersionKind{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"}

// replicatedJob is one replicated job of one Job of one pod.
func replicatedJob(name, cpu string, runFor time.Duration) map[string]any {
	return map[string]any{
		"name": name, "replicas": int64(1),
		"template": map[string]any{"spec": map[string]any{
			"parallelism": int64(1), "completions": int64(1), "backoffLimit": int64(0),
			"template": podTemplate(name, cpu, runFor),
		}},
	}
}

// jobSetUnits lists units whose consumer is a Job of the JobSet name: the
// JobSet's unit charges its Jobs, so there must be none.
func jobSetUnits(ctx context.Context, name string) ([]string, error) {
	units := &schedv1alpha1.QueueUnitList{}
	if err := env.Client.List(ctx, units, client.InNamespace("default")); err != nil {
		return nil, err
	}
	var out []string
	for _, u := range units.Items {
		if ref := u.Spec.ConsumerRef; ref != nil && ref.Kind == "Job" && strings.HasPrefix(ref.Name, name+"-") {
			out = append(out, u.Name)
		}
	}
	return out, nil
}

// jobSetCase is a JobSet of a driver asking for cpu and a worker asking for
// half a CPU, both pods completing after runFor, submitted with the quota
// label only: the webhook sets spec.suspend, the jobset controller's own
// webhook its defaults.
func jobSetCase() operatorCase {
	return operatorCase{
		op:        cluster.JobSetController,
		gvk:       jobSetGVK,
		extension: "jobset",
		build: func(name, quota, cpu string, runFor time.Duration) *unstructured.Unstructured {
			return newObject(jobSetGVK, name, quota, map[string]any{
				"replicatedJobs": []any{replicatedJob("driver", cpu, runFor), replicatedJob("worker", "500m", runFor)},
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
			if units, err := jobSetUnits(context.Background(), u.GetName()); err != nil || len(units) > 0 {
				return errors.Join(err, fmt.Errorf("the JobSet's Jobs have units of their own: %v", units))
			}
			if condition(u, "Completed") == "True" {
				return nil
			}
			rjs, _, _ := unstructured.NestedSlice(u.Object, "status", "replicatedJobsStatus")
			for _, rj := range rjs {
				m, _ := rj.(map[string]any)
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
			return condition(u, "Completed") == "True", nil
		},
	}
}

// TestJobSetControllerJobSet runs JobSets with the stock jobset controller:
// held with no pod, admitted, its pods run, it completes; evicted, it is
// suspended and its pods go, admitted again it completes. A JobSet of more
// replicated jobs than a unit has pod sets is refused at creation.
func TestJobSetControllerJobSet(t *testing.T) {
	t.Parallel()
	runOperatorCase(t, jobSetCase(), "op-js")
	t.Run("TooManyPodSets", func(t *testing.T) {
		var rjs []any
		for i := range schedv1alpha1.MaxPodSets + 1 {
			rjs = append(rjs, replicatedJob(fmt.Sprintf("r%d", i), "100m", time.Second))
		}
		js := newObject(jobSetGVK, "op-js-wide", "op-js-wide", map[string]any{"replicatedJobs": rjs})
		err := env.Client.Create(ctxFor(t), js)
		if err == nil {
			_ = env.Client.Delete(ctxFor(t), js)
		}
		if want := fmt.Sprintf("more than the %d a queue unit takes", schedv1alpha1.MaxPodSets); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("creating a JobSet of %d replicated jobs: err = %v, want a refusal saying %q", schedv1alpha1.MaxPodSets+1, err, want)
		}
	})
}
