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
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// fakeJob is a GenericJob held in memory, with its suspension in a
// ConfigMap's data so a fake client can store it.
type fakeJob struct {
	cm     *corev1.ConfigMap
	sets   []PodSet
	status JobStatus
}

func newFakeJob(name string, labels, annotations map[string]string, sets []PodSet) *fakeJob {
	return &fakeJob{
		cm: &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: labels, Annotations: annotations, UID: "uid-" + "1"},
			Data:       map[string]string{"suspend": "true"},
		},
		sets: sets,
	}
}

func (f *fakeJob) Object() client.Object      { return f.cm }
func (f *fakeJob) IsSuspended() bool          { return f.cm.Data["suspend"] == "true" }
func (f *fakeJob) Suspend()                   { f.cm.Data["suspend"] = "true" }
func (f *fakeJob) Resume()                    { f.cm.Data["suspend"] = "false" }
func (f *fakeJob) PodSets() ([]PodSet, error) { return f.sets, nil }
func (f *fakeJob) Status() JobStatus          { return f.status }

// SetPodLabels keeps the fake's one pod template's labels in its data, under
// podLabelKey.
func (f *fakeJob) SetPodLabels(labels map[string]string) []ReplacedLabel {
	m := map[string]string{}
	for k, v := range f.cm.Data {
		if strings.HasPrefix(k, podLabelPrefix) {
			m[strings.ReplaceAll(strings.TrimPrefix(k, podLabelPrefix), "_", "/")] = v
		}
	}
	replaced := SetLabels(&m, labels, "data")
	for k, v := range m {
		f.cm.Data[podLabelKey(k)] = v
	}
	return replaced
}

const podLabelPrefix = "pod-label."

func podLabelKey(label string) string { return podLabelPrefix + strings.ReplaceAll(label, "/", "_") }

// testScheme knows the core types and ours, for the fake clients of these tests.
func testScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = schedv1alpha1.AddToScheme(s)
	return s
}
