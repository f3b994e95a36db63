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

package rayjob

import (
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayv1alpha1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

func TestSuspension(t *testing.T) {
	j := &rayv1.RayJob{}
	w := WrapV1(j)
	if w.IsSuspended() {
		t.Error("plain RayJob reads suspended")
	}
	w.Suspend()
	if !j.Spec.Suspend || !w.IsSuspended() {
		t.Error("Suspend did not set spec.suspend")
	}
	w.Resume()
	if j.Spec.Suspend {
		t.Error("Resume left spec.suspend set")
	}
	a := &rayv1alpha1.RayJob{}
	WrapV1alpha1(a).Suspend()
	if !a.Spec.Suspend {
		t.Error("v1alpha1 Suspend did not set spec.suspend")
	}
	if _, err := WrapV1(&rayv1.RayJob{}).PodSets(); err == nil {
		t.Error("RayJob without rayClusterSpec queued")
	}
}

func TestClaims(t *testing.T) {
	t0, t1 := metav1.Unix(100, 0), metav1.Unix(200, 0)
	alpha := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
		{APIVersion: "ray.io/v1", Time: &t1}, {APIVersion: "ray.io/v1alpha1", Time: &t0},
	}}}
	v1 := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{{APIVersion: "ray.io/v1", Time: &t0}}}}
	both := framework.ExtensionOptions{Enabled: []string{Name, NameV1alpha1}}
	cases := []struct {
		ext  framework.Extension
		obj  *rayv1.RayJob
		want bool
	}{
		{New(both), alpha, false},
		{New(both), v1, true},
		{NewV1alpha1(both), alpha, true},
		{NewV1alpha1(both), v1, false},
		{New(framework.ExtensionOptions{Enabled: []string{Name}}), alpha, true},
		{NewV1alpha1(framework.ExtensionOptions{Enabled: []string{NameV1alpha1}}), v1, true},
	}
	for i, tc := range cases {
		if got := tc.ext.Claims(tc.obj); got != tc.want {
			t.Errorf("case %d (%s, created as %s): Claims = %v, want %v", i, tc.ext.Name, CreatedAs(tc.obj), got, tc.want)
		}
	}
}
