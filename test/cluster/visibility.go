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
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The names the chart gives the visibility API's Service and APIService.
const (
	visibilityNamespace  = "koord-queue"
	visibilityService    = "koord-queue-visibility-server"
	visibilityAPIService = "v1alpha1.visibility.koord-queue.x-k8s.io"
	visibilityReader     = "koord-queue-visibility-reader"
)

// registerVisibility points kube-apiserver's aggregation layer at koord-queue's
// visibility server, as the chart does (with its reader role bound to every
// authenticated user): Service koord-queue-visibility-server
// (here of type ExternalName, localhost, since the server is a local process
// and nothing routes cluster IPs) and the APIService with the cluster CA that
// signed the server's certificate. It waits until the APIService is Available.
func (c *Cluster) registerVisibility(ctx context.Context, queue *process) error {
	caPEM, err := os.ReadFile(c.pki.caCert)
	if err != nil {
		return err
	}
	port := int64(c.opts.Ports.Visibility)
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: visibilityNamespace}},
		&corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: visibilityService, Namespace: visibilityNamespace},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost",
				Ports: []corev1.ServicePort{{Name: "https", Port: int32(port)}}},
		},
	}
	// As the chart does: every user may ask; each answer is cut to the
	// namespaces where the caller may list QueueUnits.
	objs = append(objs,
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: visibilityReader},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"visibility.koord-queue.x-k8s.io"}, Verbs: []string{"get"},
					Resources: []string{"queues", "queues/queueunits", "elasticquotas", "elasticquotas/queueunits"}},
				// GET .../featuregates reads a collection path: kube-apiserver calls it list.
				{APIGroups: []string{"visibility.koord-queue.x-k8s.io"}, Verbs: []string{"get", "list"}, Resources: []string{"featuregates"}},
				{APIGroups: []string{"visibility.koord-queue.x-k8s.io"}, Verbs: []string{"get", "list"}, Resources: []string{"quotas"}},
			},
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: visibilityReader},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: visibilityReader},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "Group", Name: "system:authenticated"}},
		})
	for _, o := range objs {
		if err := c.Client.Create(ctx, o); client.IgnoreAlreadyExists(err) != nil {
			return fmt.Errorf("create %T %s: %w", o, o.GetName(), err)
		}
	}
	apiService := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": visibilityAPIService},
		"spec": map[string]any{
			"group": "visibility.koord-queue.x-k8s.io", "version": "v1alpha1",
			"groupPriorityMinimum": int64(100), "versionPriority": int64(100),
			"caBundle": base64.StdEncoding.EncodeToString(caPEM),
			"service":  map[string]any{"namespace": visibilityNamespace, "name": visibilityService, "port": port},
		},
	}}
	if err := c.Client.Create(ctx, apiService); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("create APIService %s: %w", visibilityAPIService, err)
	}
	return c.waitFor(ctx, "APIService "+visibilityAPIService+" Available", time.Minute, func(ctx context.Context) (bool, error) {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(apiService.GroupVersionKind())
		if err := c.Client.Get(ctx, client.ObjectKey{Name: visibilityAPIService}, got); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, cond := range conds {
			m, _ := cond.(map[string]any)
			if m["type"] == "Available" {
				if m["status"] == "True" {
					return true, nil
				}
				return false, fmt.Errorf("%v: %v (port %s)", m["reason"], m["message"], strconv.FormatInt(port, 10))
			}
		}
		return false, nil
	}, queue)
}
