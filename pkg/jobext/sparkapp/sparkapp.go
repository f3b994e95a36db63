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

package sparkapp

import (
	"fmt"
	"strconv"

	sparkv1beta2 "github.com/kubeflow/spark-operator/v2/api/v1beta2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

// Name is the extension's name.
const Name = "sparkapp"

// Pod set names.
const (
	DriverPodSet   = "driver"
	ExecutorPodSet = "executor"
)

// New describes the SparkApplication extension.
func New(framework.ExtensionOptions) framework.Extension {
	return framework.Typed(framework.Extension{
		Name: Name,
		GVK:  sparkv1beta2.SchemeGroupVersion.WithKind("SparkApplication"),
		CRD:  "sparkapplications.sparkoperator.k8s.io",
	}, Wrap)
}

// App is a SparkApplication seen by the queue.
type App struct {
	a *sparkv1beta2.SparkApplication
}

var (
	_ framework.GenericJob    = (*App)(nil)
	_ framework.StartReporter = (*App)(nil)
)

// Wrap wraps a SparkApplication.
func Wrap(a *sparkv1beta2.SparkApplication) *App { return &App{a: a} }

// Object returns the SparkApplication.
func (s *App) Object() client.Object { return s.a }

// Started: the operator moved the application past its new state.
func (s *App) Started() bool { return s.a.Status.AppState.State != sparkv1beta2.ApplicationStateNew }

// IsSuspended reads spec.suspend, the field spark-operator v2 obeys. The
// guide's annotation scheduling.x-k8s.io/suspend alone does not hold an
// application: the stock operator ignores it.
func (s *App) IsSuspended() bool { return ptr.Deref(s.a.Spec.Suspend, false) }

// Suspend sets spec.suspend, and the suspend annotation to "true" for tools
// that read the guide's form.
func (s *App) Suspend() {
	s.a.Spec.Suspend = ptr.To(true)
	s.setAnnotation("true")
}

// Resume clears spec.suspend and sets the suspend annotation to "false".
func (s *App) Resume() {
	s.a.Spec.Suspend = ptr.To(false)
	s.setAnnotation("false")
}

// SetPodLabels labels spec.driver.labels and spec.executor.labels, which the
// Spark operator puts on the pods (over its pod templates' labels).
func (s *App) SetPodLabels(labels map[string]string) []framework.ReplacedLabel {
	replaced := framework.SetLabels(&s.a.Spec.Driver.Labels, labels, "spec.driver")
	return append(replaced, framework.SetLabels(&s.a.Spec.Executor.Labels, labels, "spec.executor")...)
}

func (s *App) setAnnotation(v string) {
	if s.a.Annotations == nil {
		s.a.Annotations = map[string]string{}
	}
	s.a.Annotations[schedv1alpha1.SuspendAnnotation] = v
}

// ExecutorCount is executor.instances (default 1); with dynamic allocation,
// initialExecutors, else minExecutors, else instances.
func (s *App) ExecutorCount() (count int32, minCount *int32) {
	count = ptr.Deref(s.a.Spec.Executor.Instances, 1)
	if da := s.a.Spec.DynamicAllocation; da != nil && da.Enabled {
		switch {
		case da.InitialExecutors != nil:
			count = *da.InitialExecutors
		case da.MinExecutors != nil:
			count = *da.MinExecutors
		}
		if da.MinExecutors != nil {
			minCount = ptr.To(min(*da.MinExecutors, count))
		}
	}
	return max(count, 0), minCount
}

// PodSets is the driver (one pod) and the executors.
func (s *App) PodSets() ([]framework.PodSet, error) {
	spec := &s.a.Spec
	factor, err := s.overheadFactor()
	if err != nil {
		return nil, err
	}
	d := &spec.Driver
	driver, err := podTemplate(&d.SparkPodSpec, "spark-kubernetes-driver", d.CoreRequest, factor, d.PriorityClassName)
	if err != nil {
		return nil, fmt.Errorf("driver: %w", err)
	}
	e := &spec.Executor
	executor, err := podTemplate(&e.SparkPodSpec, "spark-kubernetes-executor", e.CoreRequest, factor, e.PriorityClassName)
	if err != nil {
		return nil, fmt.Errorf("executor: %w", err)
	}
	count, minCount := s.ExecutorCount()
	return []framework.PodSet{
		{Name: DriverPodSet, Count: 1, Template: driver},
		{Name: ExecutorPodSet, Count: count, MinCount: minCount, Template: executor},
	}, nil
}

func (s *App) overheadFactor() (float64, error) {
	if f := s.a.Spec.MemoryOverheadFactor; f != nil {
		v, err := strconv.ParseFloat(*f, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("memoryOverheadFactor %q is not a non-negative number", *f)
		}
		return v, nil
	}
	if t := s.a.Spec.Type; t == sparkv1beta2.SparkApplicationTypePython || t == sparkv1beta2.SparkApplicationTypeR {
		return nonJVMOverheadFactor, nil
	}
	return jvmOverheadFactor, nil
}

// podTemplate is the pod Spark will make: the main container with the cpu
// and memory the fields ask for, the sidecars and init containers as given.
func podTemplate(p *sparkv1beta2.SparkPodSpec, container string, coreRequest *string, factor float64, priorityClass *string) (corev1.PodTemplateSpec, error) {
	cpu, err := podCPU(coreRequest, p.Cores, p.CoreLimit)
	if err != nil {
		return corev1.PodTemplateSpec{}, err
	}
	mem, err := podMemory(p.Memory, p.MemoryOverhead, factor)
	if err != nil {
		return corev1.PodTemplateSpec{}, err
	}
	requests := corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem}
	if p.GPU != nil && p.GPU.Name != "" {
		requests[corev1.ResourceName(p.GPU.Name)] = *resource.NewQuantity(p.GPU.Quantity, resource.DecimalSI)
	}
	var t corev1.PodTemplateSpec
	if p.Template != nil {
		t = *p.Template.DeepCopy()
	}
	t.Labels = mergeMaps(t.Labels, p.Labels)
	t.Annotations = mergeMaps(t.Annotations, p.Annotations)
	main := corev1.Container{Name: container, Resources: corev1.ResourceRequirements{Requests: requests}}
	t.Spec.Containers = append([]corev1.Container{main}, p.Sidecars...)
	t.Spec.InitContainers = append(t.Spec.InitContainers, p.InitContainers...)
	if len(p.NodeSelector) > 0 {
		t.Spec.NodeSelector = mergeMaps(t.Spec.NodeSelector, p.NodeSelector)
	}
	t.Spec.Tolerations = append(t.Spec.Tolerations, p.Tolerations...)
	if p.Affinity != nil {
		t.Spec.Affinity = p.Affinity.DeepCopy()
	}
	if priorityClass != nil {
		t.Spec.PriorityClassName = *priorityClass
	}
	return t, nil
}

func mergeMaps(into, add map[string]string) map[string]string {
	if len(add) == 0 {
		return into
	}
	if into == nil {
		into = map[string]string{}
	}
	for k, v := range add {
		into[k] = v
	}
	return into
}

// Status follows the application state and the executors' states.
func (s *App) Status() framework.JobStatus {
	var st framework.JobStatus
	state := s.a.Status.AppState
	switch state.State {
	case sparkv1beta2.ApplicationStateCompleted:
		st.Finished, st.Message = true, state.ErrorMessage
		return st
	case sparkv1beta2.ApplicationStateFailed, sparkv1beta2.ApplicationStateFailedSubmission:
		st.Finished, st.Failed, st.Message = true, true, state.ErrorMessage
		return st
	}
	driver := framework.PodSetStatus{Name: DriverPodSet}
	switch state.State {
	case sparkv1beta2.ApplicationStateRunning, sparkv1beta2.ApplicationStateSucceeding, sparkv1beta2.ApplicationStateFailing:
		driver.Running = 1
	case sparkv1beta2.ApplicationStateSubmitted, sparkv1beta2.ApplicationStatePendingRerun, sparkv1beta2.ApplicationStateResuming,
		sparkv1beta2.ApplicationStateSuspending, sparkv1beta2.ApplicationStateInvalidating:
		driver.Pending = 1
	}
	executor := framework.PodSetStatus{Name: ExecutorPodSet}
	for _, es := range s.a.Status.ExecutorState {
		switch es {
		case sparkv1beta2.ExecutorStateRunning:
			executor.Running++
		case sparkv1beta2.ExecutorStatePending:
			executor.Pending++
		case sparkv1beta2.ExecutorStateCompleted:
			executor.Finished++
		}
	}
	st.PodSets = []framework.PodSetStatus{driver, executor}
	return st
}
