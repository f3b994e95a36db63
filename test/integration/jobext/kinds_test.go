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
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	sparkv1beta2 "github.com/kubeflow/spark-operator/v2/api/v1beta2"
	kfv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayv1alpha1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/workflow"
	itframework "github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// kindCase drives one job kind through the protocol.
type kindCase struct {
	ext      string
	kind     string
	newJob   func(ns string) client.Object
	empty    func() client.Object
	suspend  func(client.Object) bool
	podSets  []string
	resource corev1.ResourceList
	// setPods plays the kind's operator: pods running, or none.
	setPods func(obj client.Object, running bool)
	// statusInMain writes status with the object (no status subresource).
	statusInMain bool
}

func container(cpu string) []corev1.Container {
	return []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
	}}}
}

func template(cpu string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: container(cpu)}}
}

func quotaLabels() map[string]string { return map[string]string{schedv1alpha1.QuotaNameLabel: quota} }

func cpu(n string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(n)}
}

func kubeflowCases() []kindCase {
	replicaSet := func(specs map[kfv1.ReplicaType]int32) map[kfv1.ReplicaType]*kfv1.ReplicaSpec {
		out := map[kfv1.ReplicaType]*kfv1.ReplicaSpec{}
		for t, n := range specs {
			out[t] = &kfv1.ReplicaSpec{Replicas: ptr.To(n), Template: template("1")}
		}
		return out
	}
	kfPods := func(status *kfv1.JobStatus, running bool) {
		if running {
			now := metav1.Now()
			status.StartTime = &now
			status.ReplicaStatuses = map[kfv1.ReplicaType]*kfv1.ReplicaStatus{kfv1.TFJobReplicaTypeWorker: {Active: 2}}
		} else {
			status.StartTime = nil
			status.ReplicaStatuses = map[kfv1.ReplicaType]*kfv1.ReplicaStatus{kfv1.TFJobReplicaTypeWorker: {Active: 0}}
		}
		if status.Conditions == nil {
			status.Conditions = []kfv1.JobCondition{}
		}
	}
	return []kindCase{{
		ext: "tfjob", kind: "TFJob",
		newJob: func(ns string) client.Object {
			return &kfv1.TFJob{
				ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: ns, Labels: quotaLabels()},
				Spec: kfv1.TFJobSpec{
					RunPolicy:      kfv1.RunPolicy{Suspend: ptr.To(true)},
					TFReplicaSpecs: replicaSet(map[kfv1.ReplicaType]int32{kfv1.TFJobReplicaTypeWorker: 2, kfv1.TFJobReplicaTypePS: 1}),
				},
			}
		},
		empty:    func() client.Object { return &kfv1.TFJob{} },
		suspend:  func(o client.Object) bool { return ptr.Deref(o.(*kfv1.TFJob).Spec.RunPolicy.Suspend, false) },
		podSets:  []string{"ps", "worker"},
		resource: cpu("3"),
		setPods:  func(o client.Object, r bool) { kfPods(&o.(*kfv1.TFJob).Status, r) },
	}, {
		ext: "pytorchjob", kind: "PyTorchJob",
		newJob: func(ns string) client.Object {
			return &kfv1.PyTorchJob{
				ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: ns, Labels: quotaLabels()},
				Spec: kfv1.PyTorchJobSpec{
					RunPolicy:           kfv1.RunPolicy{Suspend: ptr.To(true)},
					PyTorchReplicaSpecs: replicaSet(map[kfv1.ReplicaType]int32{kfv1.PyTorchJobReplicaTypeWorker: 2, kfv1.PyTorchJobReplicaTypeMaster: 1}),
				},
			}
		},
		empty:    func() client.Object { return &kfv1.PyTorchJob{} },
		suspend:  func(o client.Object) bool { return ptr.Deref(o.(*kfv1.PyTorchJob).Spec.RunPolicy.Suspend, false) },
		podSets:  []string{"master", "worker"},
		resource: cpu("3"),
		setPods:  func(o client.Object, r bool) { kfPods(&o.(*kfv1.PyTorchJob).Status, r) },
	}}
}

func rayCases() []kindCase {
	clusterV1 := rayv1.RayClusterSpec{
		HeadGroupSpec:    rayv1.HeadGroupSpec{Template: template("1")},
		WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{GroupName: "small", Replicas: ptr.To[int32](2), MinReplicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](4), Template: template("2")}},
	}
	clusterV1alpha1 := rayv1alpha1.RayClusterSpec{
		HeadGroupSpec:    rayv1alpha1.HeadGroupSpec{Template: template("1")},
		WorkerGroupSpecs: []rayv1alpha1.WorkerGroupSpec{{GroupName: "small", Replicas: ptr.To[int32](2), MinReplicas: ptr.To[int32](1), MaxReplicas: ptr.To[int32](4), Template: template("2")}},
	}
	return []kindCase{{
		ext: "rayjob", kind: "RayJob",
		newJob: func(ns string) client.Object {
			return &rayv1.RayJob{
				ObjectMeta: metav1.ObjectMeta{Name: "ray", Namespace: ns, Labels: quotaLabels()},
				Spec:       rayv1.RayJobSpec{Suspend: true, Entrypoint: "python x.py", RayClusterSpec: clusterV1.DeepCopy()},
			}
		},
		empty:    func() client.Object { return &rayv1.RayJob{} },
		suspend:  func(o client.Object) bool { return o.(*rayv1.RayJob).Spec.Suspend },
		podSets:  []string{"head", "small"},
		resource: cpu("5"),
		setPods: func(o client.Object, r bool) {
			j := o.(*rayv1.RayJob)
			j.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusSuspended
			if r {
				j.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusRunning
			}
		},
	}, {
		ext: "rayjobv1alpha1", kind: "RayJob",
		newJob: func(ns string) client.Object {
			return &rayv1alpha1.RayJob{
				ObjectMeta: metav1.ObjectMeta{Name: "ray", Namespace: ns, Labels: quotaLabels()},
				Spec:       rayv1alpha1.RayJobSpec{Suspend: true, Entrypoint: "python x.py", RayClusterSpec: clusterV1alpha1.DeepCopy()},
			}
		},
		empty:    func() client.Object { return &rayv1alpha1.RayJob{} },
		suspend:  func(o client.Object) bool { return o.(*rayv1alpha1.RayJob).Spec.Suspend },
		podSets:  []string{"head", "small"},
		resource: cpu("5"),
		setPods: func(o client.Object, r bool) {
			j := o.(*rayv1alpha1.RayJob)
			j.Status.JobDeploymentStatus = rayv1alpha1.JobDeploymentStatusSuspended
			if r {
				j.Status.JobDeploymentStatus = rayv1alpha1.JobDeploymentStatusRunning
			}
		},
	}, {
		ext: "raycluster", kind: "RayCluster",
		newJob: func(ns string) client.Object {
			spec := clusterV1.DeepCopy()
			spec.Suspend = ptr.To(true)
			return &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "ray", Namespace: ns, Labels: quotaLabels()}, Spec: *spec}
		},
		empty:    func() client.Object { return &rayv1.RayCluster{} },
		suspend:  func(o client.Object) bool { return ptr.Deref(o.(*rayv1.RayCluster).Spec.Suspend, false) },
		podSets:  []string{"head", "small"},
		resource: cpu("5"),
		setPods: func(o client.Object, r bool) {
			c := o.(*rayv1.RayCluster)
			c.Status.State, c.Status.ReadyWorkerReplicas = rayv1.Suspended, 0 //nolint:staticcheck // State is what KubeRay reports
			if r {
				c.Status.State, c.Status.ReadyWorkerReplicas = rayv1.Ready, 2 //nolint:staticcheck // as above
			}
		},
	}}
}

func sparkCase() kindCase {
	return kindCase{
		ext: "sparkapp", kind: "SparkApplication",
		newJob: func(ns string) client.Object {
			return &sparkv1beta2.SparkApplication{
				ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: ns, Labels: quotaLabels(),
					Annotations: map[string]string{schedv1alpha1.SuspendAnnotation: "true"}},
				Spec: sparkv1beta2.SparkApplicationSpec{
					Type: sparkv1beta2.SparkApplicationTypeScala, Mode: sparkv1beta2.DeployModeCluster, SparkVersion: "3.5.0",
					MainApplicationFile: ptr.To("local:///pi.jar"),
					Driver:              sparkv1beta2.DriverSpec{SparkPodSpec: sparkv1beta2.SparkPodSpec{Cores: ptr.To[int32](1), Memory: ptr.To("1g"), MemoryOverhead: ptr.To("512m")}},
					Executor:            sparkv1beta2.ExecutorSpec{Instances: ptr.To[int32](2), SparkPodSpec: sparkv1beta2.SparkPodSpec{Cores: ptr.To[int32](2), Memory: ptr.To("2g"), MemoryOverhead: ptr.To("1g")}},
				},
			}
		},
		empty:    func() client.Object { return &sparkv1beta2.SparkApplication{} },
		suspend:  func(o client.Object) bool { return ptr.Deref(o.(*sparkv1beta2.SparkApplication).Spec.Suspend, false) },
		podSets:  []string{"driver", "executor"},
		resource: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5"), corev1.ResourceMemory: resource.MustParse("7680Mi")},
		setPods: func(o client.Object, r bool) {
			a := o.(*sparkv1beta2.SparkApplication)
			a.Status.AppState.State = sparkv1beta2.ApplicationStateSuspended
			a.Status.ExecutorState = nil
			if r {
				a.Status.AppState.State = sparkv1beta2.ApplicationStateRunning
				a.Status.ExecutorState = map[string]sparkv1beta2.ExecutorState{"e1": sparkv1beta2.ExecutorStateRunning, "e2": sparkv1beta2.ExecutorStateRunning}
			}
		},
	}
}

func workflowCase() kindCase {
	wf := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(workflow.GVK)
		return u
	}
	return kindCase{
		ext: "workflow", kind: "Workflow",
		newJob: func(ns string) client.Object {
			u := wf()
			u.SetName("flow")
			u.SetNamespace(ns)
			u.SetLabels(quotaLabels())
			u.SetAnnotations(map[string]string{workflow.MinResourcesAnnotation: `{"cpu": "3", "memory": "1Gi"}`})
			u.Object["spec"] = map[string]any{
				"suspend":    true,
				"entrypoint": "main",
				"templates": []any{
					map[string]any{"name": workflow.SuspendTemplate, "suspend": map[string]any{}},
					map[string]any{"name": "main", "container": map[string]any{"image": "busybox"}},
				},
			}
			return u
		},
		empty: func() client.Object { return wf() },
		suspend: func(o client.Object) bool {
			s, _, _ := unstructured.NestedBool(o.(*unstructured.Unstructured).Object, "spec", "suspend")
			return s
		},
		podSets:  []string{"workflow"},
		resource: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		setPods: func(o client.Object, r bool) {
			u := o.(*unstructured.Unstructured)
			nodes := map[string]any{}
			if r {
				nodes["flow-1"] = map[string]any{"id": "flow-1", "type": "Pod", "phase": "Running"}
				u.Object["status"] = map[string]any{"phase": "Running", "nodes": nodes}
			} else {
				u.Object["status"] = map[string]any{"phase": "Running"}
			}
		},
		statusInMain: true,
	}
}

func TestKindsLifecycle(t *testing.T) {
	cases := append(append(kubeflowCases(), rayCases()...), sparkCase(), workflowCase())
	for _, tc := range cases {
		t.Run(tc.ext, func(t *testing.T) { runKindCase(t, tc) })
	}
}

func runKindCase(t *testing.T, tc kindCase) {
	c, ns := startManager(t, []string{tc.ext}, nil)
	ctx := context.Background()
	obj := tc.newJob(ns)
	if err := c.Create(ctx, obj); err != nil {
		t.Fatalf("create: %v", err)
	}
	name := obj.GetName() + "-" + tc.ext
	unit := waitUnit(t, c, ns, name, "queue unit", anyUnit)
	ref := unit.Spec.ConsumerRef
	if ref.Kind != tc.kind || ref.Name != obj.GetName() || ref.UID != obj.GetUID() || ref.Namespace != ns {
		t.Errorf("consumerRef = %+v", ref)
	}
	var sets []string
	for _, ps := range unit.Spec.PodSet {
		sets = append(sets, ps.Name)
	}
	slices.Sort(sets)
	if diff := cmp.Diff(tc.podSets, sets); diff != "" {
		t.Errorf("pod sets (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(tc.resource, unit.Spec.Resource, cmpQuantities); diff != "" {
		t.Errorf("resource (-want +got):\n%s", diff)
	}
	if unit.Spec.Queue != quota || unit.Labels[schedv1alpha1.QuotaNameLabel] != quota {
		t.Errorf("queue %q / labels %v", unit.Spec.Queue, unit.Labels)
	}
	enqueue(t, c, ns, name)

	admit(t, c, ns, name)
	waitSuspend(t, c, tc, ns, obj.GetName(), false)
	writePods(t, c, tc, ns, obj.GetName(), true)
	waitUnit(t, c, ns, name, "Running", func(u *schedv1alpha1.QueueUnit) bool {
		return u.Status.Phase == schedv1alpha1.QueueUnitPhaseRunning && u.Status.PodState != nil && u.Status.PodState.Running > 0
	})

	evictUnit(t, c, ns, name)
	waitSuspend(t, c, tc, ns, obj.GetName(), true)
	writePods(t, c, tc, ns, obj.GetName(), false)
	waitUnit(t, c, ns, name, "Enqueued after eviction", requeued)

	cur := tc.empty()
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, cur); err != nil {
		t.Fatal(err)
	}
	waitUnitGone(t, c, ns, name)
}

func waitSuspend(t *testing.T, c client.Client, tc kindCase, ns, name string, want bool) {
	t.Helper()
	eventually(t, "suspension of "+name, func(ctx context.Context) (bool, error) {
		o := tc.empty()
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, o); err != nil {
			return false, err
		}
		return tc.suspend(o) == want, nil
	})
}

func writePods(t *testing.T, c client.Client, tc kindCase, ns, name string, running bool) {
	t.Helper()
	eventually(t, "status of "+name, func(ctx context.Context) (bool, error) {
		o := tc.empty()
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, o); err != nil {
			return false, err
		}
		tc.setPods(o, running)
		if tc.statusInMain {
			return true, c.Update(ctx, o)
		}
		return true, c.Status().Update(ctx, o)
	})
}

// TestGuideExamples creates the guide's TFJob, PyTorchJob and Workflow as
// written (naming the nameless ones) and expects each taken over.
func TestGuideExamples(t *testing.T) {
	c, ns := startManager(t, []string{"tfjob", "pytorchjob", "workflow"}, nil)
	ctx := context.Background()
	for file, unit := range map[string]string{"tfjob.yaml": "guide-tf-tfjob", "pytorchjob.yaml": "guide-pt-pytorchjob", "workflow.yaml": "my-workflow-workflow"} {
		objs, err := itframework.ReadObjects(filepath.Join(itframework.RepoRoot(), "test", "testdata", "guide", file))
		if err != nil || len(objs) != 1 {
			t.Fatalf("read %s: %v (%d objects)", file, err, len(objs))
		}
		o := objs[0]
		o.SetNamespace(ns)
		switch file {
		case "tfjob.yaml":
			o.SetName("guide-tf")
		case "pytorchjob.yaml":
			o.SetName("guide-pt")
		}
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("create %s: %v", file, err)
		}
		u := waitUnit(t, c, ns, unit, "unit of "+file, anyUnit)
		if file == "workflow.yaml" {
			if diff := cmp.Diff(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5"), corev1.ResourceMemory: resource.MustParse("5Gi")}, u.Spec.Resource, cmpQuantities); diff != "" {
				t.Errorf("workflow min-resources (-want +got):\n%s", diff)
			}
			if u.Annotations[framework.NoQuotaAnnotation] == "" {
				t.Errorf("workflow without quota label: unit annotations %v lack %s", u.Annotations, framework.NoQuotaAnnotation)
			}
		} else if u.Spec.Queue != "team-a-queue" {
			t.Errorf("%s: queue %q, want team-a-queue", file, u.Spec.Queue)
		}
	}
}

// TestTFJobAnnotationSuspend: the annotation form is taken over, and resuming
// drops the annotation.
func TestTFJobAnnotationSuspend(t *testing.T) {
	c, ns := startManager(t, []string{"tfjob"}, nil)
	ctx := context.Background()
	j := &kfv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Name: "annotated", Namespace: ns, Labels: quotaLabels(),
			Annotations: map[string]string{schedv1alpha1.SuspendAnnotation: "true"}},
		Spec: kfv1.TFJobSpec{TFReplicaSpecs: map[kfv1.ReplicaType]*kfv1.ReplicaSpec{
			kfv1.TFJobReplicaTypeWorker: {Replicas: ptr.To[int32](1), Template: template("1")},
		}},
	}
	if err := c.Create(ctx, j); err != nil {
		t.Fatal(err)
	}
	waitUnit(t, c, ns, "annotated-tfjob", "queue unit", anyUnit)
	admit(t, c, ns, "annotated-tfjob")
	eventually(t, "resumed", func(ctx context.Context) (bool, error) {
		cur := &kfv1.TFJob{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(j), cur); err != nil {
			return false, err
		}
		_, has := cur.Annotations[schedv1alpha1.SuspendAnnotation]
		return !has && cur.Spec.RunPolicy.Suspend != nil && !*cur.Spec.RunPolicy.Suspend, nil
	})
}

// TestRayClusterOfRayJobNotManaged: a cluster owned by a RayJob is never
// queued.
func TestRayClusterOfRayJobNotManaged(t *testing.T) {
	c, ns := startManager(t, []string{"raycluster"}, func(o *appOptions) { o.ManageAllJobs = true })
	ctx := context.Background()
	rc := &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "owned", Namespace: ns, Labels: quotaLabels(),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayJob", Name: "x", UID: "0000"}}},
		Spec: rayv1.RayClusterSpec{Suspend: ptr.To(true), HeadGroupSpec: rayv1.HeadGroupSpec{Template: template("1")}},
	}
	if err := c.Create(ctx, rc); err != nil {
		t.Fatal(err)
	}
	quiet(t)
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "owned-raycluster"}, &schedv1alpha1.QueueUnit{}); client.IgnoreNotFound(err) != nil || err == nil {
		t.Errorf("unit of a RayJob's cluster: err=%v", err)
	}
}
