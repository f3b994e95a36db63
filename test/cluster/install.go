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

package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Namespace is where koord-queue keeps its Queues.
const Namespace = "koord-queue"

const fieldOwner = "koord-queue-local-cluster"

func keyOf(namespace, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}

// client404 turns NotFound into "not yet" (no error) for polling.
func client404(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// CRDDirs are koord-queue's own CRD folders in a checkout.
func CRDDirs(repoRoot string) []string {
	return []string{
		filepath.Join(repoRoot, "config", "crd", "bases"),
		filepath.Join(repoRoot, "config", "crd", "elasticquota"),
	}
}

// install applies the CRDs (koord-queue's, with Koordinator's in place of
// our ElasticQuota CRD when Koordinator runs, then ExtraCRDDirs), waits until
// they are served, creates namespace koord-queue and, from a checkout,
// installs the chart's policies and roles (installPolicies).
func (c *Cluster) install(ctx context.Context) error {
	var dirs []string
	if root := c.opts.KoordQueue.RepoRoot; root != "" {
		dirs = append(dirs, CRDDirs(root)...)
		if c.opts.Koordinator.On() {
			dirs = dirs[:1]
		}
	}
	if c.opts.Koordinator.On() {
		dirs = append(dirs, c.koordinatorCRDDir())
	}
	dirs = append(dirs, c.opts.ExtraCRDDirs...)
	if err := c.InstallCRDs(ctx, dirs...); err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if err := c.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", Namespace, err)
	}
	if root := c.opts.KoordQueue.RepoRoot; root != "" {
		return c.installPolicies(ctx, root)
	}
	return nil
}

// InstallCRDs server-side applies every YAML file of dirs and waits until
// each CRD is Established.
func (c *Cluster) InstallCRDs(ctx context.Context, dirs ...string) error {
	var names []string
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			return err
		}
		if len(files) == 0 {
			return fmt.Errorf("no CRD files in %s", dir)
		}
		sort.Strings(files)
		for _, f := range files {
			objs, err := ReadObjects(f)
			if err != nil {
				return err
			}
			for _, u := range objs {
				if err := c.Apply(ctx, u); err != nil {
					return fmt.Errorf("apply %s: %w", f, err)
				}
				names = append(names, u.GetName())
			}
		}
	}
	c.logf("installed %d CRDs", len(names))
	return c.waitFor(ctx, "CRDs established", time.Minute, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			crd := &unstructured.Unstructured{}
			crd.SetAPIVersion("apiextensions.k8s.io/v1")
			crd.SetKind("CustomResourceDefinition")
			if err := c.Client.Get(ctx, keyOf("", name), crd); err != nil {
				return false, err
			}
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			established := false
			for _, cond := range conds {
				m, _ := cond.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					established = true
				}
			}
			if !established {
				return false, fmt.Errorf("CRD %s not established yet", name)
			}
		}
		return true, nil
	}, c.procs...)
}

// Apply server-side applies one object with the package's field owner.
func (c *Cluster) Apply(ctx context.Context, u *unstructured.Unstructured) error {
	return c.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership)
}

// ReadObjects decodes every YAML document of a file into unstructured objects.
func ReadObjects(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return DecodeObjects(data)
}

// DecodeObjects decodes a multi-document YAML (or JSON) stream.
func DecodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("decode: %w", err)
		}
		if len(u.Object) > 0 && strings.TrimSpace(u.GetKind()) != "" {
			out = append(out, u)
		}
	}
}
