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

package chart

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// minKubernetes is the oldest Kubernetes the chart installs on: CRD
// validation rules (x-kubernetes-validations, which the QueueUnit and
// AdmissionCheck CRDs use) are on by default from 1.25.
const minKubernetes = "1.25"

// The policies the chart renders where ValidatingAdmissionPolicy is served.
var chartPolicies = []string{"koord-queue-queueunit-status", "koord-queue-elasticquota"}

const notServedNote = "does not serve admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy"

// TestKubernetesVersions renders the chart as helm install does on the
// oldest Kubernetes it claims (no ValidatingAdmissionPolicy served: the
// policies are left out and NOTES.txt says so), on 1.29 that serves only
// v1beta1, and on 1.37 that serves v1 (the policies are in); below the
// minimum helm refuses the chart.
func TestKubernetesVersions(t *testing.T) {
	policiesIn := func(t *testing.T, r *Rendered) int {
		t.Helper()
		n := 0
		for _, name := range chartPolicies {
			for _, kind := range []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} {
				if r.Find(kind, name) != nil {
					n++
				}
			}
		}
		return n
	}
	for _, tc := range []struct {
		name  string
		flags []string
		want  int // policies and bindings rendered
	}{
		{"minimum", []string{"--kube-version", "v" + minKubernetes + ".0"}, 0},
		{"1.29 with v1beta1 only", []string{"--kube-version", "v1.29.3", "--api-versions", "admissionregistration.k8s.io/v1beta1/ValidatingAdmissionPolicy"}, 0},
		{"1.37", []string{"--kube-version", "v1.37.0", "--api-versions", servedPolicies}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := helmTemplate(t, tc.flags, fullValues...)
			if err != nil {
				t.Fatal(err)
			}
			r := &Rendered{Raw: raw, Objects: parseObjects(t, raw)}
			if got := policiesIn(t, r); got != tc.want {
				t.Errorf("%d ValidatingAdmissionPolicies and bindings rendered, want %d: %v", got, tc.want, r.Kinds())
			}
			for _, kind := range []string{"Deployment", "CustomResourceDefinition", "ClusterRole"} {
				if r.Kinds()[kind] == 0 {
					t.Errorf("no %s rendered: %v", kind, r.Kinds())
				}
			}
			note := strings.Contains(notesWith(t, tc.flags), notServedNote)
			if note != (tc.want == 0) {
				t.Errorf("NOTES.txt says the policies are left out: %v, want %v", note, tc.want == 0)
			}
		})
	}

	below := "v1.24.17"
	_, err := helmTemplate(t, []string{"--kube-version", below})
	if err == nil || !strings.Contains(err.Error(), ">="+minKubernetes) || !strings.Contains(err.Error(), below) {
		t.Errorf("helm template at Kubernetes %s: %v, want a refusal naming the required version >=%s", below, err, minKubernetes)
	}
}

// TestKubernetesMinimumDocumented checks that the README, the user guide (in
// both languages) and the chart README state the minimum.
func TestKubernetesMinimumDocumented(t *testing.T) {
	for _, doc := range []struct{ file, says string }{
		{"README.md", "Kubernetes " + minKubernetes + " or later"},
		{"docs/user-guide.md", "Kubernetes " + minKubernetes + " or later"},
		{"docs/user-guide.zh.md", "Kubernetes " + minKubernetes + " 或更高版本"},
		{"charts/koord-queue/README.md", "Kubernetes " + minKubernetes + " or later"},
	} {
		data, err := os.ReadFile(filepath.Join(framework.RepoRoot(), doc.file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), doc.says) {
			t.Errorf("%s does not say %q", doc.file, doc.says)
		}
	}
}
