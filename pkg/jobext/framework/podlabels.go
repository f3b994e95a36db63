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
	"sort"
	"strings"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
)

// ReplacedLabel is a pod template label SetPodLabels overwrote with a
// different value.
type ReplacedLabel struct {
	// Where names the template, as a path in the job (spec.template).
	Where string
	Key   string
	Old   string
}

// SetLabels writes labels into *m (creating the map) and returns the labels
// it found set to a different value, naming where. Kinds use it in
// SetPodLabels for each of their pod templates.
func SetLabels(m *map[string]string, labels map[string]string, where string) []ReplacedLabel {
	if *m == nil {
		*m = make(map[string]string, len(labels))
	}
	var replaced []ReplacedLabel
	for _, k := range sortedKeys(labels) {
		if old, ok := (*m)[k]; ok && old != "" && old != labels[k] {
			replaced = append(replaced, ReplacedLabel{Where: where, Key: k, Old: old})
		}
		(*m)[k] = labels[k]
	}
	return replaced
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// PodLabels are the labels every pod of a unit carries: its quota, so that
// koord-scheduler charges the quota koord-queue charged, and its unit's name.
// An empty quota is left out.
func PodLabels(quota, unitName string) map[string]string {
	labels := map[string]string{}
	if quota != "" {
		labels[schedv1alpha1.QuotaNameLabel] = quota
	}
	if unitName != "" {
		labels[schedv1alpha1.QueueUnitLabel] = unitName
	}
	return labels
}

// DescribeReplaced says which template labels were overwritten, for an event.
func DescribeReplaced(replaced []ReplacedLabel, labels map[string]string) string {
	parts := make([]string, 0, len(replaced))
	for _, r := range replaced {
		parts = append(parts, fmt.Sprintf("%s label %s was %q, now %q", r.Where, r.Key, r.Old, labels[r.Key]))
	}
	return strings.Join(parts, "; ")
}
