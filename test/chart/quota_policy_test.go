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
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// TestElasticQuotaPolicy renders the ElasticQuota ValidatingAdmissionPolicy
// and its binding, checks they are the objects of
// config/policy/elasticquota.yaml, and that the value turns them off. What
// the policy refuses is tested on a real API server by
// test/integration/badinput.
func TestElasticQuotaPolicy(t *testing.T) {
	const name = "koord-queue-elasticquota"
	r := render(t)
	vap := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	r.Into(t, "ValidatingAdmissionPolicy", name, vap)
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	r.Into(t, "ValidatingAdmissionPolicyBinding", name, binding)
	if binding.Spec.PolicyName != vap.Name || !slices.Equal(binding.Spec.ValidationActions, []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}) {
		t.Errorf("binding %+v does not deny with the policy", binding.Spec)
	}

	data, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "config", "policy", "elasticquota.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	config := &Rendered{Raw: string(data), Objects: parseObjects(t, string(data))}
	cvap := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	config.Into(t, "ValidatingAdmissionPolicy", name, cvap)
	cbinding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	config.Into(t, "ValidatingAdmissionPolicyBinding", name, cbinding)
	if diff := cmp.Diff(cvap.Spec, vap.Spec); diff != "" {
		t.Errorf("chart policy differs from config/policy (-config +chart):\n%s", diff)
	}
	if diff := cmp.Diff(cbinding.Spec, binding.Spec); diff != "" {
		t.Errorf("chart binding differs from config/policy (-config +chart):\n%s", diff)
	}

	r = render(t, "elasticQuotaPolicy.enabled=false")
	if r.Find("ValidatingAdmissionPolicy", name) != nil || r.Find("ValidatingAdmissionPolicyBinding", name) != nil {
		t.Error("elasticQuotaPolicy.enabled=false still renders the policy")
	}
}
