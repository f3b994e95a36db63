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

package pod

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
	"github.com/koordinator-sh/koord-queue/pkg/util/resources"
)

// group is the members of one unit: a single pod, or the pods of a group.
type group struct {
	// name is the group's name; "" for a single pod.
	name string
	// want is how many pods the unit stands for: the group's total count, or 1.
	want int
	// members are sorted by name.
	members []*corev1.Pod
	// sets are the members' pod sets, by shape; setOf maps a member to its set.
	sets  []framework.PodSet
	setOf map[string]string
}

// shape is what makes two pods of a group interchangeable for the queue:
// their demand and where they may run.
type shape struct {
	Requests          corev1.ResourceList `json:"requests"`
	NodeSelector      map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations       []corev1.Toleration `json:"tolerations,omitempty"`
	Affinity          *corev1.Affinity    `json:"affinity,omitempty"`
	PriorityClassName string              `json:"priorityClassName,omitempty"`
}

func shapeOf(p *corev1.Pod) (string, error) {
	b, err := json.Marshal(shape{
		Requests: resources.PodRequests(&p.Spec), NodeSelector: p.Spec.NodeSelector,
		Tolerations: p.Spec.Tolerations, Affinity: p.Spec.Affinity, PriorityClassName: p.Spec.PriorityClassName,
	})
	return string(b), err
}

// newGroup checks the members of one unit and sorts them into pod sets. The
// error names the problem: a count that is not a number, members that
// disagree on it, more members than it, or more shapes than a unit takes.
func newGroup(members []*corev1.Pod) (*group, error) {
	sort.Slice(members, func(a, b int) bool { return members[a].Name < members[b].Name })
	g := &group{members: members, want: 1, setOf: map[string]string{}}
	if len(members) == 0 {
		return g, nil
	}
	g.name = members[0].Labels[GroupLabel]
	if g.name != "" {
		counts := map[int][]string{}
		for _, p := range members {
			n, err := GroupCount(p)
			if err != nil {
				return nil, err
			}
			counts[n] = append(counts[n], p.Name)
		}
		if len(counts) > 1 {
			var parts []string
			for n, names := range counts {
				parts = append(parts, fmt.Sprintf("%d on %s", n, strings.Join(names, ",")))
			}
			sort.Strings(parts)
			return nil, fmt.Errorf("pods of group %s disagree on %s: %s", g.name, GroupCountAnnotation, strings.Join(parts, "; "))
		}
		for n := range counts {
			g.want = n
		}
		if len(members) > g.want {
			return nil, fmt.Errorf("group %s has %d pods, more than its %s of %d", g.name, len(members), GroupCountAnnotation, g.want)
		}
	}
	byShape := map[string]int{}
	for _, p := range members {
		key, err := shapeOf(p)
		if err != nil {
			return nil, fmt.Errorf("pod %s: %w", p.Name, err)
		}
		i, ok := byShape[key]
		if !ok {
			i = len(g.sets)
			byShape[key] = i
			g.sets = append(g.sets, framework.PodSet{Template: templateOf(p)})
		}
		g.sets[i].Count++
		g.setOf[p.Name] = setName(i)
	}
	if len(g.sets) > schedv1alpha1.MaxPodSets {
		return nil, fmt.Errorf("group %s has pods of %d different shapes (requests, node selector, tolerations, affinity, priority class); a unit takes at most %d",
			g.name, len(g.sets), schedv1alpha1.MaxPodSets)
	}
	for i := range g.sets {
		g.sets[i].Name = setName(i)
	}
	return g, nil
}

// setName names the i-th pod set: "main", then "shape-2", "shape-3"...
func setName(i int) string {
	if i == 0 {
		return "main"
	}
	return fmt.Sprintf("shape-%d", i+1)
}

// complete reports whether every pod of the group is here.
func (g *group) complete() bool { return len(g.members) >= g.want }

// status counts the members per set and tells the end: every pod of the
// unit finished, failed if any failed.
func (g *group) status() framework.JobStatus {
	var st framework.JobStatus
	idx := map[string]int{}
	for i := range g.sets {
		idx[g.sets[i].Name] = i
		st.PodSets = append(st.PodSets, framework.PodSetStatus{Name: g.sets[i].Name})
	}
	done := 0
	var failed []string
	for _, p := range g.members {
		count(&st.PodSets[idx[g.setOf[p.Name]]], p)
		switch p.Status.Phase {
		case corev1.PodSucceeded:
			done++
		case corev1.PodFailed:
			done++
			failed = append(failed, p.Name)
		}
	}
	if done >= g.want && done == len(g.members) {
		st.Finished = true
		if len(failed) > 0 {
			st.Failed = true
			st.Message = "pods failed: " + strings.Join(failed, ", ")
		}
	}
	return st
}
