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

package framework

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Typed completes ext for jobs of the Go type PT (a pointer to T): NewObject
// returns an empty PT, and Wrap refuses any other type before handing the job
// to wrap. An unstructured job is given ext.GVK, as it has no kind of its own.
func Typed[T any, PT interface {
	*T
	client.Object
}, G GenericJob](ext Extension, wrap func(PT) G) Extension {
	ext.NewObject = func() client.Object {
		obj := PT(new(T))
		if u, ok := client.Object(obj).(*unstructured.Unstructured); ok {
			u.SetGroupVersionKind(ext.GVK)
		}
		return obj
	}
	ext.Wrap = func(obj client.Object) (GenericJob, error) {
		j, ok := obj.(PT)
		if !ok {
			return nil, fmt.Errorf("extension %s: want %T, got %T", ext.Name, PT(nil), obj)
		}
		return wrap(j), nil
	}
	return ext
}

// EndBy reads one condition of a job into st: a true condition of the type
// succeeded ends the job, one of the type failed ends it as failed, and the
// condition's message explains the end. Other conditions change nothing.
func EndBy[C ~string](st *JobStatus, typ C, status corev1.ConditionStatus, message string, succeeded, failed C) {
	if status != corev1.ConditionTrue {
		return
	}
	switch typ {
	case succeeded:
		st.Finished, st.Message = true, message
	case failed:
		st.Finished, st.Failed, st.Message = true, true, message
	}
}

// JobPodsAtOnce is how many pods a batch Job of spec runs at once:
// min(parallelism, completions), parallelism defaulting to 1 and unset
// completions meaning no cap. The Job and JobSet extensions share it.
func JobPodsAtOnce(spec *batchv1.JobSpec) int32 {
	n := ptr.Deref(spec.Parallelism, 1)
	if spec.Completions != nil && *spec.Completions < n {
		n = *spec.Completions
	}
	return max(n, 0)
}
