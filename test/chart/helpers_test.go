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
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// Namespace is where the guide installs the chart.
const Namespace = "koord-queue"

func chartDir() string { return filepath.Join(framework.RepoRoot(), "charts", "koord-queue") }

// tool finds helm or kubectl: $ENV, else the tools folder of hack/tools.sh.
// A missing tool fails the test.
func tool(t *testing.T, name, env string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%s: %v", env, p, err)
		}
		return p
	}
	out, err := exec.Command(filepath.Join(framework.RepoRoot(), "hack", "tools.sh"), "dir").Output()
	if err != nil {
		t.Fatalf("hack/tools.sh dir: %v", err)
	}
	p := filepath.Join(strings.TrimSpace(string(out)), name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s not found at %s: build it with 'hack/tools.sh %s' or set %s (run these tests with 'make test-chart')", name, p, name, env)
	}
	return p
}

func helm(t *testing.T) string    { return tool(t, "helm", "HELM") }
func kubectl(t *testing.T) string { return tool(t, "kubectl", "KUBECTL") }

// servedPolicies is the --api-versions entry by which helm template learns
// that the API server serves ValidatingAdmissionPolicy, as helm install
// learns it from discovery on Kubernetes 1.30 and later.
const servedPolicies = "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy"

// renderRaw runs helm template for release koord-queue in namespace
// koord-queue, CRDs included, with the given --set values, for an API
// server that serves ValidatingAdmissionPolicy.
func renderRaw(t *testing.T, sets ...string) (string, error) {
	t.Helper()
	return helmTemplate(t, []string{"--api-versions", servedPolicies}, sets...)
}

// helmTemplate is renderRaw with other helm flags (--kube-version,
// --api-versions) in place of the served policies.
func helmTemplate(t *testing.T, flags []string, sets ...string) (string, error) {
	t.Helper()
	args := append([]string{"template", "koord-queue", chartDir(), "--namespace", Namespace, "--include-crds"}, flags...)
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(helm(t), args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("helm %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// Rendered is the parsed output of helm template.
type Rendered struct {
	Raw     string
	Objects []*unstructured.Unstructured
}

func render(t *testing.T, sets ...string) *Rendered {
	t.Helper()
	raw, err := renderRaw(t, sets...)
	if err != nil {
		t.Fatal(err)
	}
	return &Rendered{Raw: raw, Objects: parseObjects(t, raw)}
}

// parseObjects splits a multi-document YAML stream into objects, skipping
// empty documents.
func parseObjects(t *testing.T, raw string) []*unstructured.Unstructured {
	t.Helper()
	var objects []*unstructured.Unstructured
	reader := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(raw)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("split rendered YAML: %v", err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatalf("parse rendered YAML: %v\n%s", err, doc)
		}
		if s := strings.TrimSpace(string(js)); s == "null" || s == "{}" {
			continue
		}
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(js); err != nil {
			t.Fatalf("rendered object: %v\n%s", err, doc)
		}
		objects = append(objects, o)
	}
	return objects
}

// Find returns the object of that kind and name (any namespace), or nil.
func (r *Rendered) Find(kind, name string) *unstructured.Unstructured {
	for _, o := range r.Objects {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// Kinds counts the rendered objects by kind.
func (r *Rendered) Kinds() map[string]int {
	m := map[string]int{}
	for _, o := range r.Objects {
		m[o.GetKind()]++
	}
	return m
}

// Into converts the named object into a typed one, failing when it is absent.
func (r *Rendered) Into(t *testing.T, kind, name string, out any) {
	t.Helper()
	o := r.Find(kind, name)
	if o == nil {
		t.Fatalf("%s %s not rendered", kind, name)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, out, true); err != nil {
		t.Fatalf("%s %s does not convert: %v", kind, name, err)
	}
}

func (r *Rendered) deployment(t *testing.T, name string) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	r.Into(t, "Deployment", name, d)
	return d
}

func (r *Rendered) clusterRole(t *testing.T, name string) *rbacv1.ClusterRole {
	t.Helper()
	c := &rbacv1.ClusterRole{}
	r.Into(t, "ClusterRole", name, c)
	return c
}

// container returns the only container of d, failing unless it has that name.
func container(t *testing.T, d *appsv1.Deployment, name string) corev1.Container {
	t.Helper()
	cs := d.Spec.Template.Spec.Containers
	if len(cs) != 1 || cs[0].Name != name {
		t.Fatalf("deployment %s: want one container %q, got %v", d.Name, name, cs)
	}
	return cs[0]
}

// flag returns the value of --name=value in args and whether it is there.
func flag(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// allows reports whether rules grant verb on group/resource.
func allows(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) &&
			(slices.Contains(r.Verbs, verb) || slices.Contains(r.Verbs, "*")) {
			return true
		}
	}
	return false
}
