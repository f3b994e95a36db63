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

package raycluster

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

// HeadPodSet is the name of the head's pod set.
const HeadPodSet = "head"

// Group is a worker group, whichever API version it came from.
type Group struct {
	Name        string
	Replicas    *int32
	MinReplicas *int32
	MaxReplicas *int32
	// NumOfHosts is the pods per replica; 0 means 1.
	NumOfHosts int32
	Template   *corev1.PodTemplateSpec
}

// Count is the group's pods: replicas (unset: minReplicas) kept within
// [minReplicas, maxReplicas], times the hosts per replica.
func (g *Group) Count() int32 {
	n := ptr.Deref(g.Replicas, ptr.Deref(g.MinReplicas, 0))
	if g.MaxReplicas != nil && n > *g.MaxReplicas {
		n = *g.MaxReplicas
	}
	if g.MinReplicas != nil && n < *g.MinReplicas {
		n = *g.MinReplicas
	}
	return max(n, 0) * g.hosts()
}

// MinCount is the least pods the group runs with, when it says.
func (g *Group) MinCount() *int32 {
	if g.MinReplicas == nil {
		return nil
	}
	return ptr.To(min(max(*g.MinReplicas, 0)*g.hosts(), g.Count()))
}

func (g *Group) hosts() int32 {
	if g.NumOfHosts <= 0 {
		return 1
	}
	return g.NumOfHosts
}

// SetPodLabels labels the head template and every worker group's template.
func SetPodLabels(head *corev1.PodTemplateSpec, groups []Group, labels map[string]string) []framework.ReplacedLabel {
	replaced := framework.SetLabels(&head.Labels, labels, "head group template")
	for _, g := range groups {
		if g.Template != nil {
			replaced = append(replaced, framework.SetLabels(&g.Template.Labels, labels, "worker group "+g.Name+" template")...)
		}
	}
	return replaced
}

// PodSets is the head (one pod) followed by each worker group in order.
func PodSets(head *corev1.PodTemplateSpec, groups []Group) ([]framework.PodSet, error) {
	sets := []framework.PodSet{{Name: HeadPodSet, Count: 1, Template: *head.DeepCopy()}}
	seen := map[string]bool{HeadPodSet: true}
	for i := range groups {
		g := &groups[i]
		if seen[g.Name] {
			return nil, fmt.Errorf("worker group name %q is not unique", g.Name)
		}
		seen[g.Name] = true
		sets = append(sets, framework.PodSet{Name: g.Name, Count: g.Count(), MinCount: g.MinCount(), Template: *g.Template.DeepCopy()})
	}
	return sets, nil
}

// RunningSets spreads running pods over the pod sets: the head when it runs,
// then the ready workers filled into the groups in order.
func RunningSets(sets []framework.PodSet, headRunning bool, readyWorkers int32) []framework.PodSetStatus {
	out := make([]framework.PodSetStatus, 0, len(sets))
	for _, s := range sets {
		st := framework.PodSetStatus{Name: s.Name}
		if s.Name == HeadPodSet {
			if headRunning {
				st.Running = 1
			}
		} else {
			st.Running = min(readyWorkers, s.Count)
			readyWorkers -= st.Running
		}
		out = append(out, st)
	}
	return out
}

// AllSets gives every pod set the same state: running or pending.
func AllSets(sets []framework.PodSet, running bool) []framework.PodSetStatus {
	out := make([]framework.PodSetStatus, 0, len(sets))
	for _, s := range sets {
		st := framework.PodSetStatus{Name: s.Name}
		if running {
			st.Running = s.Count
		} else {
			st.Pending = s.Count
		}
		out = append(out, st)
	}
	return out
}
