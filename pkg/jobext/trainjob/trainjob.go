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
	"fmt"

	trainerv1 "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

// Name is the extension's name.
const Name = "trainjob"

// Kind is the TrainJob kind.
const Kind = "TrainJob"

// New describes the TrainJob extension. It watches both kinds of training
// runtime, so a TrainJob waiting for its runtime is queued once it exists.
func New(framework.ExtensionOptions) framework.Extension {
	gv := trainerv1.GroupVersion
	ext := framework.Typed(framework.Extension{
		Name: Name, GVK: gv.WithKind(Kind), CRD: "trainjobs." + gv.Group,
	}, Wrap)
	ext.Dependencies = []framework.Dependency{
		{Object: &trainerv1.ClusterTrainingRuntime{}, Jobs: jobsUsing(trainerv1.ClusterTrainingRuntimeKind)},
		{Object: &trainerv1.TrainingRuntime{}, Jobs: jobsUsing(trainerv1.TrainingRuntimeKind)},
	}
	return ext
}

// Job is a TrainJob seen by the queue, with its runtime once resolved.
type Job struct {
	tj *trainerv1.TrainJob
	// runtime is the resolved runtime's spec; nil until Resolve finds it.
	runtime *trainerv1.TrainingRuntimeSpec
	// badRef is a runtimeRef the trainer cannot serve.
	badRef error
}

var (
	_ framework.GenericJob  = (*Job)(nil)
	_ framework.Resolver    = (*Job)(nil)
	_ framework.LabelsApart = (*Job)(nil)
)

// Wrap wraps a TrainJob; its runtime is read by Resolve.
func Wrap(tj *trainerv1.TrainJob) *Job { return &Job{tj: tj} }

// WrapResolved wraps a TrainJob whose runtime's spec is already known.
func WrapResolved(tj *trainerv1.TrainJob, runtime *trainerv1.TrainingRuntimeSpec) *Job {
	return &Job{tj: tj, runtime: runtime}
}

// Object returns the TrainJob.
func (w *Job) Object() client.Object { return w.tj }

// IsSuspended reads spec.suspend.
func (w *Job) IsSuspended() bool { return ptr.Deref(w.tj.Spec.Suspend, false) }

// Suspend sets spec.suspend: the trainer suspends its JobSet, whose
// controller suspends the Jobs, and their pods are deleted.
func (w *Job) Suspend() { w.tj.Spec.Suspend = ptr.To(true) }

// Resume clears spec.suspend and drops the suspend annotation.
func (w *Job) Resume() {
	w.tj.Spec.Suspend = ptr.To(false)
	if a := w.tj.GetAnnotations(); a != nil {
		if _, ok := a[schedv1alpha1.SuspendAnnotation]; ok {
			delete(a, schedv1alpha1.SuspendAnnotation)
			w.tj.SetAnnotations(a)
		}
	}
}

// LabelsApart: the trainer's webhook refuses podTemplateOverrides changed in
// the write that resumes a TrainJob.
func (w *Job) LabelsApart() {}

// runtimeKind is the kind of runtime spec.runtimeRef names, with the API's
// defaults (group trainer.kubeflow.org, kind ClusterTrainingRuntime), or an
// error naming a reference the trainer does not serve.
func runtimeKind(tj *trainerv1.TrainJob) (string, error) {
	ref := tj.Spec.RuntimeRef
	group := ptr.Deref(ref.APIGroup, trainerv1.GroupVersion.Group)
	kind := ptr.Deref(ref.Kind, trainerv1.ClusterTrainingRuntimeKind)
	if group != trainerv1.GroupVersion.Group || (kind != trainerv1.ClusterTrainingRuntimeKind && kind != trainerv1.TrainingRuntimeKind) {
		return "", fmt.Errorf("spec.runtimeRef names a %s of group %q: the trainer serves only %s and %s of %s",
			kind, group, trainerv1.ClusterTrainingRuntimeKind, trainerv1.TrainingRuntimeKind, trainerv1.GroupVersion.Group)
	}
	if ref.Name == "" {
		return "", errors.New("spec.runtimeRef has no name")
	}
	return kind, nil
}

// Resolve reads the runtime spec.runtimeRef names. A runtime that does not
// exist is a *framework.MissingError naming it.
func (w *Job) Resolve(ctx context.Context, c client.Reader) error {
	w.runtime, w.badRef = nil, nil
	kind, err := runtimeKind(w.tj)
	if err != nil {
		w.badRef = err // PodSets reports it: the job is invalid
		return nil
	}
	name := w.tj.Spec.RuntimeRef.Name
	var spec *trainerv1.TrainingRuntimeSpec
	what := kind + " " + name
	if kind == trainerv1.ClusterTrainingRuntimeKind {
		rt := &trainerv1.ClusterTrainingRuntime{}
		err, spec = c.Get(ctx, client.ObjectKey{Name: name}, rt), &rt.Spec
	} else {
		rt := &trainerv1.TrainingRuntime{}
		what = kind + " " + w.tj.Namespace + "/" + name
		err, spec = c.Get(ctx, client.ObjectKey{Namespace: w.tj.Namespace, Name: name}, rt), &rt.Spec
	}
	if apierrors.IsNotFound(err) {
		return &framework.MissingError{What: what}
	}
	if err != nil {
		return fmt.Errorf("get %s: %w", what, err)
	}
	w.runtime = spec
	return nil
}

// PodSets is one set per replicated job of the resolved runtime, in the
// runtime's order, as the trainer will create it for this TrainJob: its
// Jobs times the pods each runs (see replicatedJobs).
func (w *Job) PodSets() ([]framework.PodSet, error) {
	jobs, err := w.replicatedJobs()
	if err != nil {
		return nil, err
	}
	var sets []framework.PodSet
	for _, j := range jobs {
		count := j.replicas * j.podsPerJob
		if count <= 0 {
			continue
		}
		sets = append(sets, framework.PodSet{Name: j.name, Count: count, Template: j.template})
	}
	return sets, nil
}

// Status reads the Complete and Failed conditions and status.jobsStatus,
// which the trainer copies from its JobSet and counts Jobs: a ready Job's
// pods run, an active one's that is not ready wait, a succeeded one's are
// finished. A Job's pods are counted from the resolved runtime, one while it
// is not known.
func (w *Job) Status() framework.JobStatus {
	var st framework.JobStatus
	for _, c := range w.tj.Status.Conditions {
		framework.EndBy(&st, c.Type, corev1.ConditionStatus(c.Status), c.Message, trainerv1.TrainJobComplete, trainerv1.TrainJobFailed)
	}
	perJob := map[string]int32{}
	if jobs, err := w.replicatedJobs(); err == nil {
		for _, j := range jobs {
			perJob[j.name] = j.podsPerJob
		}
	}
	for _, s := range w.tj.Status.JobsStatus {
		n, ok := perJob[s.Name]
		if !ok {
			n = 1
		}
		active := ptr.Deref(s.Active, 0)
		ready := min(ptr.Deref(s.Ready, 0), active)
		st.PodSets = append(st.PodSets, framework.PodSetStatus{
			Name:     s.Name,
			Running:  ready * n,
			Pending:  max(active-ready, 0) * n,
			Finished: ptr.Deref(s.Succeeded, 0) * n,
		})
	}
	return st
}

// jobsUsing maps a runtime of kind to the TrainJobs whose runtimeRef names
// it, read from the cache.
func jobsUsing(kind string) func(context.Context, client.Reader, client.Object) []types.NamespacedName {
	return func(ctx context.Context, c client.Reader, obj client.Object) []types.NamespacedName {
		list := &trainerv1.TrainJobList{}
		var opts []client.ListOption
		if kind == trainerv1.TrainingRuntimeKind {
			opts = append(opts, client.InNamespace(obj.GetNamespace()))
		}
		if err := c.List(ctx, list, opts...); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing the TrainJobs of a training runtime", "kind", kind, "runtime", obj.GetName())
			return nil
		}
		var keys []types.NamespacedName
		for i := range list.Items {
			tj := &list.Items[i]
			if k, err := runtimeKind(tj); err == nil && k == kind && tj.Spec.RuntimeRef.Name == obj.GetName() {
				keys = append(keys, client.ObjectKeyFromObject(tj))
			}
		}
		return keys
	}
}
