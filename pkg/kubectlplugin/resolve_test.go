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

package kubectlplugin

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	utiltesting "github.com/koordinator-sh/koord-queue/pkg/util/testing"
)

func TestResolve(t *testing.T) {
	// Units as the extensions name them: a batch Job's unit has the job's
	// name; every other kind adds the extension's name.
	owned := utiltesting.MakeQueueUnit("legacy-unit", "ns").ConsumerRef("", "", "").Obj()
	owned.Spec.ConsumerRef = nil
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "rc", Controller: ptr.To(true)}}
	// A group of pods: consumerRef names its first member, every member owns it.
	group := utiltesting.MakeQueueUnit("g-podgroup", "ns").ConsumerRef("v1", "Pod", "g-0").Obj()
	group.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "g-0"}, {APIVersion: "v1", Kind: "Pod", Name: "g-1"}}
	// Another kind's plain owner reference names no job.
	plain := utiltesting.MakeQueueUnit("plain", "ns").ConsumerRef("batch/v1", "Job", "plain").Obj()
	plain.OwnerReferences = []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "rc2"}}
	units := []schedv1alpha1.QueueUnit{
		*utiltesting.MakeQueueUnit("train", "ns").Obj(),
		*utiltesting.MakeQueueUnit("train-tfjob", "ns").ConsumerRef("kubeflow.org/v1", "TFJob", "train").Obj(),
		*utiltesting.MakeQueueUnit("mnist-pytorchjob", "ns").ConsumerRef("kubeflow.org/v1", "PyTorchJob", "mnist").Obj(),
		*utiltesting.MakeQueueUnit("hpc-mpijob", "ns").ConsumerRef("kubeflow.org/v2beta1", "MPIJob", "hpc").Obj(),
		*utiltesting.MakeQueueUnit("etl-sparkapp", "ns").ConsumerRef("sparkoperator.k8s.io/v1beta2", "SparkApplication", "etl").Obj(),
		*utiltesting.MakeQueueUnit("wf-workflow", "ns").ConsumerRef("argoproj.io/v1alpha1", "Workflow", "wf").Obj(),
		*utiltesting.MakeQueueUnit("llm-jobset", "ns").ConsumerRef("jobset.x-k8s.io/v1alpha2", "JobSet", "llm").Obj(),
		*utiltesting.MakeQueueUnit("serve-0-leaderworkerset", "ns").ConsumerRef("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "serve").Phase(schedv1alpha1.QueueUnitPhaseRunning).Obj(),
		*utiltesting.MakeQueueUnit("serve-1-leaderworkerset", "ns").ConsumerRef("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "serve").Phase(schedv1alpha1.QueueUnitPhaseEnqueued).Obj(),
		*utiltesting.MakeQueueUnit("one-0-leaderworkerset", "ns").ConsumerRef("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "one").Phase(schedv1alpha1.QueueUnitPhaseRunning).Obj(),
		*utiltesting.MakeQueueUnit("ft-trainjob", "ns").ConsumerRef("trainer.kubeflow.org/v1alpha1", "TrainJob", "ft").Obj(),
		*owned,
		*utiltesting.MakeQueueUnit("solo-pod", "ns").ConsumerRef("v1", "Pod", "solo").Obj(),
		*group,
		*plain,
	}
	cases := []struct {
		ref, want, wantErr string
	}{
		{ref: "job/train", want: "train"},
		{ref: "jobs.batch/train", want: "train"},
		{ref: "Job/train", want: "train"},
		{ref: "tfjob/train", want: "train-tfjob"},
		{ref: "tfjobs.kubeflow.org/train", want: "train-tfjob"},
		{ref: "pytorchjob/mnist", want: "mnist-pytorchjob"},
		{ref: "mpijob/hpc", want: "hpc-mpijob"},
		{ref: "mpijobs.kubeflow.org/hpc", want: "hpc-mpijob"},
		{ref: "sparkapp/etl", want: "etl-sparkapp"},
		{ref: "sparkapplication/etl", want: "etl-sparkapp"},
		{ref: "wf/wf", want: "wf-workflow"},
		{ref: "jobset/llm", want: "llm-jobset"},
		{ref: "jobsets.jobset.x-k8s.io/llm", want: "llm-jobset"},
		// A LeaderWorkerSet has a unit per group: the one that waits.
		{ref: "leaderworkerset/serve", want: "serve-1-leaderworkerset"},
		{ref: "lws/serve", want: "serve-1-leaderworkerset"},
		{ref: "lws/one", want: "one-0-leaderworkerset"},
		{ref: "trainjob/ft", want: "ft-trainjob"},
		{ref: "trainjobs.trainer.kubeflow.org/ft", want: "ft-trainjob"},
		{ref: "jobset/ft", wantErr: "no QueueUnit in namespace ns belongs to JobSet ft"},
		{ref: "raycluster/rc", want: "legacy-unit"},
		{ref: "pod/solo", want: "solo-pod"},
		{ref: "po/g-0", want: "g-podgroup"},
		{ref: "pods/g-1", want: "g-podgroup"},
		{ref: "pod/g-2", wantErr: "gets its unit only once every member is here"},
		{ref: "raycluster/rc2", wantErr: "no QueueUnit in namespace ns belongs to RayCluster rc2"},
		{ref: "qu/train-tfjob", want: "train-tfjob"},
		{ref: "queueunit/train", want: "train"},
		{ref: "train-tfjob", want: "train-tfjob"},
		{ref: "mnist", want: "mnist-pytorchjob"},
		// A bare name that is a unit wins over jobs of that name.
		{ref: "train", want: "train"},
		{ref: "rayjob/train", wantErr: "no QueueUnit in namespace ns belongs to RayJob train"},
		{ref: "cronjob/train", wantErr: "known job kinds: job, jobset, leaderworkerset, mpijob, pod, pytorchjob, raycluster, rayjob, sparkapplication, tfjob, trainjob, workflow, queueunit (qu)"},
		{ref: "nothing", wantErr: "no QueueUnit named nothing in namespace ns"},
		{ref: "job/", wantErr: `"job/" is not NAME or KIND/NAME`},
		{ref: "a/b/c", wantErr: `"a/b/c" is not NAME or KIND/NAME`},
		{ref: "qu/none", wantErr: "no QueueUnit named none"},
	}
	for _, tc := range cases {
		t.Run(tc.ref, func(t *testing.T) {
			u, err := Resolve(units, "ns", tc.ref)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want it to say %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if u.Name != tc.want {
				t.Errorf("got %s, want %s", u.Name, tc.want)
			}
		})
	}
}

func TestResolveAmbiguous(t *testing.T) {
	units := []schedv1alpha1.QueueUnit{
		*utiltesting.MakeQueueUnit("x-tfjob", "ns").ConsumerRef("kubeflow.org/v1", "TFJob", "x").Obj(),
		*utiltesting.MakeQueueUnit("x-pytorchjob", "ns").ConsumerRef("kubeflow.org/v1", "PyTorchJob", "x").Obj(),
	}
	_, err := Resolve(units, "ns", "x")
	if err == nil || !strings.Contains(err.Error(), "say which: pytorchjob/x, tfjob/x") {
		t.Errorf("err %v", err)
	}
}
