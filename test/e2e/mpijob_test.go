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
	"errors"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/koordinator-sh/koord-queue/test/cluster"
)

var mpiJobGVK = schema.GroupVersionKind{Group: "kubeflow.org", Version: "v2beta1", Kind: "MPIJob"}

// mpiJobCase is an MPIJob with a launcher asking for cpu and one worker
// asking for half a CPU, submitted with the quota label only: the webhook
// sets spec.runPolicy.suspend. The launcher runs as a batch Job, whose pod
// the fake nodes complete; the worker, owned by the MPIJob, serves until the
// operator deletes it, as an MPI worker does.
func mpiJobCase() operatorCase {
	return operatorCase{
		op:        cluster.MPIOperator,
		gvk:       mpiJobGVK,
		extension: "mpijob",
		build: func(name, quota, cpu string, runFor time.Duration) *unstructured.Unstructured {
			return newObject(mpiJobGVK, name, quota, map[string]any{
				"slotsPerWorker": int64(1),
				"runPolicy":      map[string]any{"cleanPodPolicy": "Running"},
				"mpiReplicaSpecs": map[string]any{
					"Launcher": map[string]any{
						"replicas": int64(1), "restartPolicy": "Never",
						"template": podTemplate("launcher", cpu, runFor),
					},
					"Worker": map[string]any{
						"replicas": int64(1), "restartPolicy": "Never",
						"template": podTemplate("worker", "500m", 0),
					},
				},
			})
		},
		suspended: []string{"spec", "runPolicy", "suspend"},
		seen: func(u *unstructured.Unstructured) error {
			if condition(u, "Suspended") != "True" {
				return errors.New("no Suspended condition yet")
			}
			return nil
		},
		running: func(u *unstructured.Unstructured) error {
			if condition(u, "Running") != "True" && condition(u, "Succeeded") != "True" {
				return errors.New("no Running condition yet")
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

// TestMPIOperatorMPIJob runs MPIJobs with the stock mpi-operator: held with
// no pod, admitted, its launcher and worker run, it completes; evicted, it is
// suspended and its pods go, admitted again it completes.
func TestMPIOperatorMPIJob(t *testing.T) {
	t.Parallel()
	runOperatorCase(t, mpiJobCase(), "op-mpi")
}
