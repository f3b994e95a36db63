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

package visibility

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	visibilityv1alpha1 "github.com/koordinator-sh/koord-queue/apis/visibility/v1alpha1"
)

// quotaColumns are the columns of the quotas Table; priority 1 ones show
// only with kubectl -o wide.
var quotaColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the quota (its ElasticQuota's name)."},
	{Name: "Parent", Type: "string", Description: "The parent quota."},
	{Name: "Namespace", Type: "string", Priority: 1, Description: "Namespace of the ElasticQuota."},
	{Name: "Pending", Type: "integer", Description: "Units waiting for the quota or one below it."},
	{Name: "Admitted", Type: "integer", Description: "Units holding the quota or one below it."},
	{Name: "CPU", Type: "string", Description: "CPU used/min/max; - for no limit."},
	{Name: "GPU", Type: "string", Description: "GPUs used/min/max, for every resource named like a GPU; - for none."},
	{Name: "Memory", Type: "string", Priority: 1, Description: "Memory used/min/max."},
	{Name: "Borrowed", Type: "string", Priority: 1, Description: "What the quota uses above its min."},
	{Name: "Lent", Type: "string", Priority: 1, Description: "The min the quota does not use, which others may use."},
}

// quotaTable renders quotas as a meta.k8s.io Table, one row per quota.
func quotaTable(quotas []visibilityv1alpha1.Quota) *metav1.Table {
	t := &metav1.Table{
		ColumnDefinitions: quotaColumns,
		Rows:              make([]metav1.TableRow, 0, len(quotas)),
	}
	for i := range quotas {
		q := &quotas[i]
		var gpus []visibilityv1alpha1.QuotaResource
		for _, r := range q.Resources {
			if strings.Contains(strings.ToLower(string(r.Name)), "gpu") {
				gpus = append(gpus, r)
			}
		}
		row := metav1.TableRow{Cells: []any{
			q.Name, dashIfEmpty(q.Parent), dashIfEmpty(q.QuotaNamespace), int64(q.PendingUnits), int64(q.AdmittedUnits),
			levels(q.Resources, func(r corev1.ResourceName) bool { return r == corev1.ResourceCPU }),
			levelsOf(gpus), levels(q.Resources, func(r corev1.ResourceName) bool { return r == corev1.ResourceMemory }),
			amounts(q.Resources, func(r visibilityv1alpha1.QuotaResource) string { return r.Borrowed.String() }, func(r visibilityv1alpha1.QuotaResource) bool { return !r.Borrowed.IsZero() }),
			amounts(q.Resources, func(r visibilityv1alpha1.QuotaResource) string { return r.Lent.String() }, func(r visibilityv1alpha1.QuotaResource) bool { return !r.Lent.IsZero() }),
		}}
		// Trimmed by the server as the request asks (includeObject).
		row.Object = runtime.RawExtension{Object: q.DeepCopy()}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// levels is the used/min/max of the resources keep selects.
func levels(all []visibilityv1alpha1.QuotaResource, keep func(corev1.ResourceName) bool) string {
	var picked []visibilityv1alpha1.QuotaResource
	for _, r := range all {
		if keep(r.Name) {
			picked = append(picked, r)
		}
	}
	return levelsOf(picked)
}

// levelsOf writes "4/2/8" for one resource and "a 4/2/8, b 1/0/-" for
// several; "-" for none.
func levelsOf(rs []visibilityv1alpha1.QuotaResource) string {
	if len(rs) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		maxText := "-"
		if r.Max != nil {
			maxText = r.Max.String()
		}
		level := fmt.Sprintf("%s/%s/%s", r.Used.String(), r.Min.String(), maxText)
		if len(rs) > 1 {
			level = string(r.Name) + " " + level
		}
		parts = append(parts, level)
	}
	return strings.Join(parts, ", ")
}

// amounts writes "cpu 2, memory 1Gi" for the resources keep selects.
func amounts(rs []visibilityv1alpha1.QuotaResource, text func(visibilityv1alpha1.QuotaResource) string, keep func(visibilityv1alpha1.QuotaResource) bool) string {
	var parts []string
	for _, r := range rs {
		if keep(r) {
			parts = append(parts, string(r.Name)+" "+text(r))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
