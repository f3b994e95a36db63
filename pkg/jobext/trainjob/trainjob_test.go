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

package trainjob

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	trainerv1 "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	jobsetv1 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

func cpu(v string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(v)}
}

func container(name, req string) corev1.Container {
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: cpu(req)}}
}

// rjob is a replicated job of a runtime's template; ancestor "" is none.
func rjob(name, ancestor string, replicas int32, parallelism *int32, pod corev1.PodSpec) jobsetv1.ReplicatedJob {
	rj := jobsetv1.ReplicatedJob{Name: name, Replicas: replicas, Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
		Parallelism: parallelism, Template: corev1.PodTemplateSpec{Spec: pod},
	}}}
	if ancestor != "" {
		rj.Template.Labels = map[string]string{"trainer.kubeflow.org/trainjob-ancestor-step": ancestor}
	}
	return rj
}

func runtimeSpec(policy *trainerv1.MLPolicy, jobs ...jobsetv1.ReplicatedJob) *trainerv1.TrainingRuntimeSpec {
	return &trainerv1.TrainingRuntimeSpec{MLPolicy: policy, Template: trainerv1.JobSetTemplateSpec{Spec: jobsetv1.JobSetSpec{ReplicatedJobs: jobs}}}
}

type row struct {
	Name  string
	Count int32
	CPU   string
}

func rows(t *testing.T, w *Job) []row {
	t.Helper()
	sets, err := w.PodSets()
	if err != nil {
		t.Fatal(err)
	}
	var got []row
	for i := range sets {
		q := framework.PodSetRequests(&sets[i])[corev1.ResourceCPU]
		got = append(got, row{sets[i].Name, sets[i].Count, q.String()})
	}
	return got
}

// torchRuntime: two initializers, a trainer step of numNodes 2 whose node
// container asks 1 CPU beside a 500m sidecar, with 100m overhead, and an
// extra job of 2 Jobs of 2 pods.
func torchRuntime() *trainerv1.TrainingRuntimeSpec {
	always := corev1.ContainerRestartPolicyAlways
	trainer := corev1.PodSpec{
		InitContainers: []corev1.Container{container("setup", "3"), container("proxy", "500m")},
		Containers:     []corev1.Container{container("node", "1")},
		Overhead:       cpu("100m"),
	}
	trainer.InitContainers[1].RestartPolicy = &always
	return runtimeSpec(&trainerv1.MLPolicy{NumNodes: ptr.To[int32](2), MLPolicySource: trainerv1.MLPolicySource{Torch: &trainerv1.TorchMLPolicySource{}}},
		rjob("dataset-initializer", "dataset-initializer", 3, nil, corev1.PodSpec{Containers: []corev1.Container{container("dataset-initializer", "2")}}),
		rjob("model-initializer", "model-initializer", 0, nil, corev1.PodSpec{Containers: []corev1.Container{container("model-initializer", "1")}}),
		rjob("node", "trainer", 5, ptr.To[int32](7), trainer),
		rjob("extra", "", 2, ptr.To[int32](2), corev1.PodSpec{Containers: []corev1.Container{container("x", "250m")}}),
	)
}

// TestPodSetsFromRuntime: with no trainer overrides the trainer step runs
// the runtime's numNodes pods in one Job (its template's replicas and
// parallelism do not count), the initializers one Job of one pod whatever
// their replicas, another job its replicas times its parallelism. Init
// containers, a sidecar and the overhead are charged as the kubelet would.
func TestPodSetsFromRuntime(t *testing.T) {
	w := WrapResolved(&trainerv1.TrainJob{}, torchRuntime())
	// Trainer pod: the init container's 3 runs before the sidecar starts,
	// then sidecar 0.5 + node 1 run together, plus 0.1 overhead:
	// max(3, 1.5) + 0.1 = 3.1 per pod.
	want := []row{{"dataset-initializer", 1, "2"}, {"model-initializer", 1, "1"}, {"node", 2, "6200m"}, {"extra", 4, "1"}}
	if diff := cmp.Diff(want, rows(t, w)); diff != "" {
		t.Errorf("pod sets (-want +got):\n%s", diff)
	}
}

// TestPodSetsTrainerOverrides: spec.trainer.numNodes replaces the runtime's,
// resourcesPerNode replaces the node container's resources (limits alone are
// the request), and podTemplateOverrides reach the pods of the jobs they
// target.
func TestPodSetsTrainerOverrides(t *testing.T) {
	tj := &trainerv1.TrainJob{Spec: trainerv1.TrainJobSpec{
		Trainer: &trainerv1.Trainer{NumNodes: ptr.To[int32](4), ResourcesPerNode: &corev1.ResourceRequirements{Limits: cpu("2")}},
		PodTemplateOverrides: []trainerv1.PodTemplateOverride{{
			TargetJobs: []trainerv1.PodTemplateOverrideTargetJob{{Name: "extra"}},
			Metadata:   &metav1.ObjectMeta{Labels: map[string]string{"team": "a"}},
			Spec:       &trainerv1.PodTemplateSpecOverride{NodeSelector: map[string]string{"pool": "gpu"}},
		}},
	}}
	w := WrapResolved(tj, torchRuntime())
	// Trainer pod: max(3, 0.5+2) + 0.1 = 3.1.
	want := []row{{"dataset-initializer", 1, "2"}, {"model-initializer", 1, "1"}, {"node", 4, "12400m"}, {"extra", 4, "1"}}
	if diff := cmp.Diff(want, rows(t, w)); diff != "" {
		t.Errorf("pod sets (-want +got):\n%s", diff)
	}
	sets, _ := w.PodSets()
	extra := sets[3].Template
	if extra.Labels["team"] != "a" || extra.Spec.NodeSelector["pool"] != "gpu" || extra.Spec.Containers[0].Name != "x" {
		t.Errorf("override not merged into extra's template: %+v", extra)
	}
	if sets[2].Template.Spec.NodeSelector != nil {
		t.Errorf("override reached a job it does not target: %v", sets[2].Template.Spec.NodeSelector)
	}
	// No mlPolicy: the trainer step keeps its template's parallelism, and
	// numNodes still replaces it (the plain ML policy).
	plain := runtimeSpec(nil, rjob("node", "trainer", 1, ptr.To[int32](3), corev1.PodSpec{Containers: []corev1.Container{container("node", "1")}}))
	if diff := cmp.Diff([]row{{"node", 3, "3"}}, rows(t, WrapResolved(&trainerv1.TrainJob{}, plain))); diff != "" {
		t.Errorf("no mlPolicy (-want +got):\n%s", diff)
	}
	tj = &trainerv1.TrainJob{Spec: trainerv1.TrainJobSpec{Trainer: &trainerv1.Trainer{NumNodes: ptr.To[int32](5)}}}
	if diff := cmp.Diff([]row{{"node", 5, "5"}}, rows(t, WrapResolved(tj, plain))); diff != "" {
		t.Errorf("no mlPolicy, numNodes 5 (-want +got):\n%s", diff)
	}
}

// TestPodSetsMPI: under an MPI policy numNodes sizes the job named node, one
// less when the launcher runs as a node, and resourcesPerNode reaches the
// node containers of the launcher and the node job.
func TestPodSetsMPI(t *testing.T) {
	rt := runtimeSpec(&trainerv1.MLPolicy{NumNodes: ptr.To[int32](1), MLPolicySource: trainerv1.MLPolicySource{MPI: &trainerv1.MPIMLPolicySource{RunLauncherAsNode: ptr.To(true)}}},
		rjob("launcher", "trainer", 1, nil, corev1.PodSpec{Containers: []corev1.Container{container("node", "1")}}),
		rjob("node", "", 1, nil, corev1.PodSpec{Containers: []corev1.Container{container("node", "1"), container("ssh", "100m")}}),
	)
	tj := &trainerv1.TrainJob{Spec: trainerv1.TrainJobSpec{Trainer: &trainerv1.Trainer{NumNodes: ptr.To[int32](4), ResourcesPerNode: &corev1.ResourceRequirements{Requests: cpu("3")}}}}
	want := []row{{"launcher", 1, "3"}, {"node", 3, "9300m"}}
	if diff := cmp.Diff(want, rows(t, WrapResolved(tj, rt))); diff != "" {
		t.Errorf("launcher as node (-want +got):\n%s", diff)
	}
	rt.MLPolicy.MPI.RunLauncherAsNode = nil
	want = []row{{"launcher", 1, "3"}, {"node", 4, "4400m"}}
	if diff := cmp.Diff(want, rows(t, WrapResolved(tj, rt))); diff != "" {
		t.Errorf("launcher apart (-want +got):\n%s", diff)
	}
}

func runtimeScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := trainerv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestResolve: runtimeRef defaults to a ClusterTrainingRuntime; a namespaced
// TrainingRuntime is read in the TrainJob's namespace; a missing one is a
// MissingError naming kind and name; a kind the trainer does not serve makes
// the job invalid, the error naming it.
func TestResolve(t *testing.T) {
	ctx := context.Background()
	one := runtimeSpec(nil, rjob("node", "trainer", 1, nil, corev1.PodSpec{Containers: []corev1.Container{container("node", "1")}}))
	two := runtimeSpec(nil, rjob("node", "trainer", 1, ptr.To[int32](2), corev1.PodSpec{Containers: []corev1.Container{container("node", "1")}}))
	c := fake.NewClientBuilder().WithScheme(runtimeScheme(t)).WithObjects(
		&trainerv1.ClusterTrainingRuntime{ObjectMeta: metav1.ObjectMeta{Name: "torch"}, Spec: *one},
		&trainerv1.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Name: "torch", Namespace: "ns"}, Spec: *two},
	).Build()
	tj := func(kind *string, name string) *trainerv1.TrainJob {
		return &trainerv1.TrainJob{ObjectMeta: metav1.ObjectMeta{Name: "tj", Namespace: "ns"}, Spec: trainerv1.TrainJobSpec{RuntimeRef: trainerv1.RuntimeRef{Name: name, Kind: kind}}}
	}
	w := Wrap(tj(nil, "torch"))
	if _, err := w.PodSets(); err == nil {
		t.Error("pod sets of an unresolved TrainJob")
	}
	if err := w.Resolve(ctx, c); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]row{{"node", 1, "1"}}, rows(t, w)); diff != "" {
		t.Errorf("cluster runtime (-want +got):\n%s", diff)
	}
	w = Wrap(tj(ptr.To("TrainingRuntime"), "torch"))
	if err := w.Resolve(ctx, c); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]row{{"node", 2, "2"}}, rows(t, w)); diff != "" {
		t.Errorf("namespaced runtime (-want +got):\n%s", diff)
	}
	var missing *framework.MissingError
	err := Wrap(tj(nil, "gone")).Resolve(ctx, c)
	if !errors.As(err, &missing) || missing.Error() != "ClusterTrainingRuntime gone not found" {
		t.Errorf("missing cluster runtime: %v", err)
	}
	err = Wrap(tj(ptr.To("TrainingRuntime"), "gone")).Resolve(ctx, c)
	if !errors.As(err, &missing) || missing.Error() != "TrainingRuntime ns/gone not found" {
		t.Errorf("missing runtime: %v", err)
	}
	w = Wrap(tj(ptr.To("Runtime"), "torch"))
	if err := w.Resolve(ctx, c); err != nil {
		t.Fatalf("an unserved kind is not a read error: %v", err)
	}
	if _, err := w.PodSets(); err == nil || !strings.Contains(err.Error(), "a Runtime of group") {
		t.Errorf("unserved kind: %v", err)
	}
	// A runtime maps to the TrainJobs that name it, of its kind.
	c = fake.NewClientBuilder().WithScheme(runtimeScheme(t)).WithObjects(tj(nil, "torch"), func() *trainerv1.TrainJob {
		o := tj(ptr.To("TrainingRuntime"), "torch")
		o.Name = "ns-runtime"
		return o
	}()).Build()
	got := jobsUsing("ClusterTrainingRuntime")(ctx, c, &trainerv1.ClusterTrainingRuntime{ObjectMeta: metav1.ObjectMeta{Name: "torch"}})
	if diff := cmp.Diff([]types.NamespacedName{{Namespace: "ns", Name: "tj"}}, got); diff != "" {
		t.Errorf("jobs using the cluster runtime (-want +got):\n%s", diff)
	}
	got = jobsUsing("TrainingRuntime")(ctx, c, &trainerv1.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Name: "torch", Namespace: "ns"}})
	if diff := cmp.Diff([]types.NamespacedName{{Namespace: "ns", Name: "ns-runtime"}}, got); diff != "" {
		t.Errorf("jobs using the namespaced runtime (-want +got):\n%s", diff)
	}
}

// TestSuspension: spec.suspend holds a TrainJob; Resume clears it and drops
// the guide's annotation.
func TestSuspension(t *testing.T) {
	tj := &trainerv1.TrainJob{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{schedv1alpha1.SuspendAnnotation: "true", "x": "y"}}}
	w := Wrap(tj)
	if w.IsSuspended() {
		t.Error("the annotation alone holds the TrainJob")
	}
	w.Suspend()
	if !ptr.Deref(tj.Spec.Suspend, false) || !w.IsSuspended() {
		t.Errorf("Suspend: spec.suspend = %v", tj.Spec.Suspend)
	}
	w.Resume()
	if w.IsSuspended() || !ptr.Equal(tj.Spec.Suspend, ptr.To(false)) {
		t.Errorf("Resume: spec.suspend = %v", tj.Spec.Suspend)
	}
	if _, ok := tj.Annotations[schedv1alpha1.SuspendAnnotation]; ok || tj.Annotations["x"] != "y" {
		t.Errorf("Resume: annotations = %v", tj.Annotations)
	}
}

// TestPodLabels: the labels go in one override of koord-queue's, last,
// targeting every runtime job, and reach every pod set; writing them again
// changes nothing; a runtime template label naming another quota is
// reported; the user's overrides stay. Unresolved, nothing is written.
func TestPodLabels(t *testing.T) {
	rt := torchRuntime()
	rt.Template.Spec.ReplicatedJobs[3].Template.Spec.Template.Labels = map[string]string{schedv1alpha1.QuotaNameLabel: "other"}
	user := trainerv1.PodTemplateOverride{TargetJobs: []trainerv1.PodTemplateOverrideTargetJob{{Name: "node"}}, Metadata: &metav1.ObjectMeta{Labels: map[string]string{"team": "a"}}}
	tj := &trainerv1.TrainJob{Spec: trainerv1.TrainJobSpec{PodTemplateOverrides: []trainerv1.PodTemplateOverride{user}}}
	if r := Wrap(tj).SetPodLabels(map[string]string{"a": "b"}); r != nil || len(tj.Spec.PodTemplateOverrides) != 1 {
		t.Fatalf("unresolved: replaced %v, overrides %v", r, tj.Spec.PodTemplateOverrides)
	}
	labels := framework.PodLabels("q", "tj-trainjob")
	w := WrapResolved(tj, rt)
	replaced := w.SetPodLabels(labels)
	if len(replaced) != 1 || replaced[0].Old != "other" {
		t.Errorf("replaced = %+v, want extra's quota label", replaced)
	}
	if n := len(tj.Spec.PodTemplateOverrides); n != 2 || tj.Spec.PodTemplateOverrides[0].Metadata.Labels["team"] != "a" {
		t.Fatalf("overrides = %+v", tj.Spec.PodTemplateOverrides)
	}
	before := tj.DeepCopy()
	w.SetPodLabels(labels)
	if diff := cmp.Diff(before.Spec, tj.Spec); diff != "" {
		t.Errorf("labelling again changed the TrainJob:\n%s", diff)
	}
	sets, err := w.PodSets()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sets {
		if s.Template.Labels[schedv1alpha1.QuotaNameLabel] != "q" || s.Template.Labels[schedv1alpha1.QueueUnitLabel] != "tj-trainjob" {
			t.Errorf("pod set %s labels = %v", s.Name, s.Template.Labels)
		}
	}
	if sets[2].Template.Labels["team"] != "a" {
		t.Errorf("the user's override was lost: %v", sets[2].Template.Labels)
	}
	// The unit's quota changed (--default-quota): the one override is rewritten.
	w.SetPodLabels(framework.PodLabels("q2", "tj-trainjob"))
	if n := len(tj.Spec.PodTemplateOverrides); n != 2 || tj.Spec.PodTemplateOverrides[1].Metadata.Labels[schedv1alpha1.QuotaNameLabel] != "q2" {
		t.Errorf("relabelled overrides = %+v", tj.Spec.PodTemplateOverrides)
	}
}

// TestStatus: jobsStatus counts Jobs; each Job's pods come from the
// resolved runtime (one while unknown). Complete and Failed end the job.
func TestStatus(t *testing.T) {
	tj := &trainerv1.TrainJob{Spec: trainerv1.TrainJobSpec{Trainer: &trainerv1.Trainer{NumNodes: ptr.To[int32](3)}}}
	w := WrapResolved(tj, torchRuntime())
	if st := w.Status(); st.Finished || st.Active() != 0 {
		t.Fatalf("a new TrainJob: %+v", st)
	}
	tj.Status.JobsStatus = []trainerv1.JobStatus{
		{Name: "dataset-initializer", Succeeded: ptr.To[int32](1), Active: ptr.To[int32](0), Ready: ptr.To[int32](0)},
		{Name: "node", Ready: ptr.To[int32](1), Active: ptr.To[int32](1)},
		{Name: "extra", Ready: ptr.To[int32](1), Active: ptr.To[int32](2)},
	}
	want := []framework.PodSetStatus{{Name: "dataset-initializer", Finished: 1}, {Name: "node", Running: 3}, {Name: "extra", Running: 2, Pending: 2}}
	if diff := cmp.Diff(want, w.Status().PodSets); diff != "" {
		t.Errorf("running (-want +got):\n%s", diff)
	}
	if got := Wrap(tj).Status().PodSets[1]; got.Running != 1 {
		t.Errorf("unresolved: node = %+v, want one running pod per ready Job", got)
	}
	tj.Status.Conditions = []metav1.Condition{{Type: "Failed", Status: metav1.ConditionTrue, Message: "trainer failed"}}
	if st := w.Status(); !st.Finished || !st.Failed || st.Message != "trainer failed" {
		t.Errorf("failed: %+v", st)
	}
	tj.Status.Conditions = []metav1.Condition{{Type: "Complete", Status: metav1.ConditionTrue}}
	if st := w.Status(); !st.Finished || st.Failed {
		t.Errorf("complete: %+v", st)
	}
}
