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

package jobext

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	trainerv1 "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	jobframework "github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

// trainingRuntimeSpec has a dataset initializer (one pod of 500m) and a
// trainer step whose node container asks 1 cpu, run on 2 nodes by default.
func trainingRuntimeSpec() trainerv1.TrainingRuntimeSpec {
	step := func(name, ancestor, container, cpuReq string) jobsetv1.ReplicatedJob {
		return jobsetv1.ReplicatedJob{Name: name, Replicas: 1, Template: batchv1.JobTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"trainer.kubeflow.org/trainjob-ancestor-step": ancestor}},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: container, Image: "busybox", Resources: corev1.ResourceRequirements{Requests: cpu(cpuReq)},
			}}}}},
		}}
	}
	return trainerv1.TrainingRuntimeSpec{
		MLPolicy: &trainerv1.MLPolicy{NumNodes: ptr.To[int32](2), MLPolicySource: trainerv1.MLPolicySource{Torch: &trainerv1.TorchMLPolicySource{}}},
		Template: trainerv1.JobSetTemplateSpec{Spec: jobsetv1.JobSetSpec{ReplicatedJobs: []jobsetv1.ReplicatedJob{
			step("dataset-initializer", "dataset-initializer", "dataset-initializer", "500m"),
			step("node", "trainer", "node", "1"),
		}}},
	}
}

// createClusterRuntime makes a ClusterTrainingRuntime of a name unique to
// the test's namespace and removes it at the end.
func createClusterRuntime(t *testing.T, c client.Client, ns string) string {
	t.Helper()
	rt := &trainerv1.ClusterTrainingRuntime{ObjectMeta: metav1.ObjectMeta{Name: "rt-" + ns}, Spec: trainingRuntimeSpec()}
	if err := c.Create(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), rt) })
	return rt.Name
}

// trainJob runs on 3 nodes of 2 cpu each (resourcesPerNode) after its
// dataset initializer: 6.5 cpu.
func trainJob(ns, name, runtimeKind, runtime string, suspend bool) *trainerv1.TrainJob {
	return &trainerv1.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: quotaLabels()},
		Spec: trainerv1.TrainJobSpec{
			RuntimeRef: trainerv1.RuntimeRef{Name: runtime, Kind: ptr.To(runtimeKind)},
			Trainer:    &trainerv1.Trainer{NumNodes: ptr.To[int32](3), ResourcesPerNode: &corev1.ResourceRequirements{Requests: cpu("2")}},
			Suspend:    ptr.To(suspend),
		},
	}
}

func trainJobSuspended(o client.Object) bool {
	return ptr.Deref(o.(*trainerv1.TrainJob).Spec.Suspend, false)
}

// trainJobCase plays the trainer's status, copied from its JobSet: the
// initializer's Job done and the trainer's Job ready while running, the
// trainer's Job suspended once held.
func trainJobCase(runtime string) kindCase {
	return kindCase{
		ext: "trainjob", kind: "TrainJob",
		newJob: func(ns string) client.Object {
			return trainJob(ns, "tj", trainerv1.ClusterTrainingRuntimeKind, runtime, true)
		},
		empty:    func() client.Object { return &trainerv1.TrainJob{} },
		suspend:  trainJobSuspended,
		podSets:  []string{"dataset-initializer", "node"},
		resource: cpu("6500m"),
		setPods: func(o client.Object, running bool) {
			st := &o.(*trainerv1.TrainJob).Status
			if running {
				st.JobsStatus = []trainerv1.JobStatus{jobsStatus("dataset-initializer", 0, 0, 1, 0), jobsStatus("node", 1, 1, 0, 0)}
				return
			}
			st.JobsStatus = []trainerv1.JobStatus{jobsStatus("dataset-initializer", 0, 0, 0, 1), jobsStatus("node", 0, 0, 0, 1)}
		},
	}
}

// jobsStatus is one entry of a TrainJob's status.jobsStatus, every count
// given (the CRD requires them).
func jobsStatus(name string, ready, active, succeeded, suspended int32) trainerv1.JobStatus {
	return trainerv1.JobStatus{Name: name, Ready: ptr.To(ready), Active: ptr.To(active), Succeeded: ptr.To(succeeded),
		Suspended: ptr.To(suspended), Failed: ptr.To[int32](0)}
}

// TestTrainJobLifecycle: its unit has the runtime's pod sets with the
// TrainJob's numNodes and resourcesPerNode; held, admitted and resumed,
// running, evicted and suspended, requeued, deleted with its unit.
func TestTrainJobLifecycle(t *testing.T) {
	c := k8s(t)
	runKindCase(t, trainJobCase(createClusterRuntime(t, c, createNamespace(t, c, nil))))
}

func getTrainJob(t *testing.T, c client.Client, ns, name string) *trainerv1.TrainJob {
	t.Helper()
	tj := &trainerv1.TrainJob{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, tj); err != nil {
		t.Fatal(err)
	}
	return tj
}

func writeTrainJobPods(t *testing.T, c client.Client, ns, name string, running bool) {
	t.Helper()
	writePods(t, c, trainJobCase(""), ns, name, running)
}

// TestTrainJobLabelsAndGrowth: admitted, the TrainJob's pods get the unit's
// labels through a podTemplateOverride targeting every runtime job, written
// while it is still suspended. Raising numNodes while it runs suspends it,
// and once its pods are gone its unit waits again at the new size.
func TestTrainJobLabelsAndGrowth(t *testing.T) {
	c, ns := startManager(t, []string{"trainjob"}, nil)
	ctx := context.Background()
	rt := createClusterRuntime(t, c, ns)
	if err := c.Create(ctx, trainJob(ns, "grows", trainerv1.ClusterTrainingRuntimeKind, rt, true)); err != nil {
		t.Fatal(err)
	}
	unit := "grows-trainjob"
	waitUnit(t, c, ns, unit, "queue unit", anyUnit)
	admit(t, c, ns, unit)
	waitSuspend(t, c, trainJobCase(rt), ns, "grows", false)
	tj := getTrainJob(t, c, ns, "grows")
	if n := len(tj.Spec.PodTemplateOverrides); n != 1 {
		t.Fatalf("podTemplateOverrides = %+v, want koord-queue's one", tj.Spec.PodTemplateOverrides)
	}
	o := tj.Spec.PodTemplateOverrides[0]
	var targets []string
	for _, j := range o.TargetJobs {
		targets = append(targets, j.Name)
	}
	if diff := cmp.Diff([]string{"dataset-initializer", "node"}, targets); diff != "" {
		t.Errorf("override targets (-want +got):\n%s", diff)
	}
	if o.Metadata == nil || o.Metadata.Labels[schedv1alpha1.QuotaNameLabel] != quota || o.Metadata.Labels[schedv1alpha1.QueueUnitLabel] != unit {
		t.Errorf("override metadata = %+v", o.Metadata)
	}
	writeTrainJobPods(t, c, ns, "grows", true)
	waitUnit(t, c, ns, unit, "Running", phaseIs(schedv1alpha1.QueueUnitPhaseRunning))

	eventually(t, "numNodes raised", func(ctx context.Context) (bool, error) {
		cur := getTrainJob(t, c, ns, "grows")
		cur.Spec.Trainer.NumNodes = ptr.To[int32](4)
		return true, c.Update(ctx, cur)
	})
	waitSuspend(t, c, trainJobCase(rt), ns, "grows", true)
	if msg := waitEventOn(t, c, ns, "TrainJob", "grows", jobframework.EventJobGrew); !strings.Contains(msg, "pod set node grew from 3 to 4 pods") {
		t.Errorf("JobGrew says %q, want the set and both sizes", msg)
	}
	if u := waitUnit(t, c, ns, unit, "unit", anyUnit); u.Status.Phase != schedv1alpha1.QueueUnitPhaseRunning {
		t.Errorf("unit gave its quota back with pods active: %s", u.Status.Phase)
	}
	writeTrainJobPods(t, c, ns, "grows", false)
	u := waitUnit(t, c, ns, unit, "queued again at the new size", func(u *schedv1alpha1.QueueUnit) bool {
		return requeued(u) && len(u.Spec.PodSet) == 2 && u.Spec.PodSet[1].Count == 4
	})
	if diff := cmp.Diff(cpu("8500m"), u.Spec.Resource, cmpQuantities); diff != "" {
		t.Errorf("resource at the new size (-want +got):\n%s", diff)
	}
	admit(t, c, ns, unit)
	waitSuspend(t, c, trainJobCase(rt), ns, "grows", false)
}

// TestTrainJobWaitsForRuntime: a TrainJob whose runtime (of either kind) is
// missing gets a Warning naming it and no unit; once the runtime is created
// it gets its unit, sized from it. A runtime deleted under a running
// TrainJob takes nothing from it: it keeps running in its admission.
func TestTrainJobWaitsForRuntime(t *testing.T) {
	c, ns := startManager(t, []string{"trainjob"}, nil)
	ctx := context.Background()
	clusterName := "late-" + ns
	for _, tj := range []*trainerv1.TrainJob{
		trainJob(ns, "cluster", trainerv1.ClusterTrainingRuntimeKind, clusterName, true),
		trainJob(ns, "local", trainerv1.TrainingRuntimeKind, "late", true),
	} {
		if err := c.Create(ctx, tj); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{"cluster": "ClusterTrainingRuntime " + clusterName + " not found", "local": "TrainingRuntime " + ns + "/late not found"} {
		if msg := waitEventOn(t, c, ns, "TrainJob", name, jobframework.EventWaitingForDependency); !strings.Contains(msg, want) {
			t.Errorf("%s: event says %q, want %q", name, msg, want)
		}
	}
	quiet(t)
	for _, name := range []string{"cluster-trainjob", "local-trainjob"} {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &schedv1alpha1.QueueUnit{}); client.IgnoreNotFound(err) != nil || err == nil {
			t.Errorf("unit %s before its runtime exists: err=%v", name, err)
		}
	}
	cluster := &trainerv1.ClusterTrainingRuntime{ObjectMeta: metav1.ObjectMeta{Name: clusterName}, Spec: trainingRuntimeSpec()}
	local := &trainerv1.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Name: "late", Namespace: ns}, Spec: trainingRuntimeSpec()}
	for _, o := range []client.Object{cluster, local} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), cluster) })
	for _, name := range []string{"cluster-trainjob", "local-trainjob"} {
		u := waitUnit(t, c, ns, name, "unit once the runtime exists", anyUnit)
		if diff := cmp.Diff(cpu("6500m"), u.Spec.Resource, cmpQuantities); diff != "" {
			t.Errorf("%s resource (-want +got):\n%s", name, diff)
		}
	}

	enqueue(t, c, ns, "local-trainjob")
	admit(t, c, ns, "local-trainjob")
	waitSuspend(t, c, trainJobCase(""), ns, "local", false)
	writeTrainJobPods(t, c, ns, "local", true)
	waitUnit(t, c, ns, "local-trainjob", "Running", phaseIs(schedv1alpha1.QueueUnitPhaseRunning))
	if err := c.Delete(ctx, local); err != nil {
		t.Fatal(err)
	}
	waitEventOn(t, c, ns, "TrainJob", "local", jobframework.EventWaitingForDependency)
	quiet(t)
	if trainJobSuspended(getTrainJob(t, c, ns, "local")) {
		t.Error("a running TrainJob was suspended when its runtime was deleted")
	}
	if u := waitUnit(t, c, ns, "local-trainjob", "unit", anyUnit); u.Status.Phase != schedv1alpha1.QueueUnitPhaseRunning || len(u.Status.Admissions) != 2 {
		t.Errorf("unit of a running TrainJob whose runtime went: phase %s admissions %v", u.Status.Phase, u.Status.Admissions)
	}
}

// TestTrainJobBackstop: a TrainJob with the quota label created while no
// webhook ran, and already running, is suspended and waits for its unit.
func TestTrainJobBackstop(t *testing.T) {
	c := k8s(t)
	ctx := context.Background()
	ns := createNamespace(t, c, nil)
	rt := createClusterRuntime(t, c, ns)
	tj := trainJob(ns, "early", trainerv1.ClusterTrainingRuntimeKind, rt, false)
	if err := c.Create(ctx, tj); err != nil {
		t.Fatal(err)
	}
	trainJobCase(rt).setPods(tj, true)
	if err := c.Status().Update(ctx, tj); err != nil {
		t.Fatal(err)
	}
	startManager(t, []string{"trainjob"}, func(o *appOptions) { o.WatchNamespaces = append(o.WatchNamespaces, ns) })
	waitSuspend(t, c, trainJobCase(rt), ns, "early", true)
	u := waitUnit(t, c, ns, "early-trainjob", "queue unit of the running TrainJob", anyUnit)
	if p := u.Status.Phase; p == schedv1alpha1.QueueUnitPhaseDequeued || p == schedv1alpha1.QueueUnitPhaseRunning {
		t.Errorf("unit of the held TrainJob is %s", p)
	}
}

// TestTrainJobWebhook: the webhook stores a TrainJob suspended (its runtime
// is not read there), and it gets its unit. With --manage-all-jobs the
// JobSet the trainer makes for a TrainJob is neither held nor queued as a
// JobSet, while a plain JobSet is.
func TestTrainJobWebhook(t *testing.T) {
	w := startWebhook(t, []string{"job", "jobset", "trainjob"}, func(o *appOptions) { o.ManageAllJobs = true })
	ctx := context.Background()
	rt := createClusterRuntime(t, w.c, w.ns)
	held := trainJob(w.ns, "held", trainerv1.ClusterTrainingRuntimeKind, rt, false)
	held.Spec.Suspend = nil
	if err := w.c.Create(ctx, held); err != nil {
		t.Fatal(err)
	}
	if !trainJobSuspended(held) {
		t.Error("a TrainJob was stored unsuspended")
	}
	waitUnit(t, w.c, w.ns, "held-trainjob", "queue unit", anyUnit)

	js := &jobsetv1.JobSet{
		ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: w.ns},
		Spec:       jobsetv1.JobSetSpec{ReplicatedJobs: []jobsetv1.ReplicatedJob{replicatedJob("node", 1, 1, "1")}},
	}
	js.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(held, trainerv1.GroupVersion.WithKind("TrainJob"))}
	plain := jobSet(w.ns, "plain", false)
	plain.Labels = nil
	for _, o := range []client.Object{js, plain} {
		if err := w.c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if jobSetSuspended(js) {
		t.Error("the TrainJob's JobSet was stored suspended")
	}
	if !jobSetSuspended(plain) {
		t.Error("a plain JobSet was not held with --manage-all-jobs: the case proves nothing")
	}
	waitUnit(t, w.c, w.ns, "plain-jobset", "unit of the plain JobSet", anyUnit)
	quiet(t)
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: "held-jobset"}, &schedv1alpha1.QueueUnit{}); client.IgnoreNotFound(err) != nil || err == nil {
		t.Errorf("unit of the TrainJob's JobSet: err=%v", err)
	}
	if jobSetSuspended(getJobSet(t, w.c, w.ns, "held")) {
		t.Error("the TrainJob's JobSet was suspended")
	}
}

func getJobSet(t *testing.T, c client.Client, ns, name string) *jobsetv1.JobSet {
	t.Helper()
	js := &jobsetv1.JobSet{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, js); err != nil {
		t.Fatal(err)
	}
	return js
}
