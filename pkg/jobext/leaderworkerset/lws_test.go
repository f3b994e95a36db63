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

package leaderworkerset

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	lwsv1 "sigs.k8s.io/lws/api/leaderworkerset/v1"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

func template(cpu string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
	}}}}
}

func set(size *int32, leader *corev1.PodTemplateSpec) *lwsv1.LeaderWorkerSet {
	return &lwsv1.LeaderWorkerSet{
		ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "team"},
		Spec: lwsv1.LeaderWorkerSetSpec{Replicas: ptr.To[int32](2), LeaderWorkerTemplate: lwsv1.LeaderWorkerTemplate{
			Size: size, LeaderTemplate: leader, WorkerTemplate: template("2"),
		}},
	}
}

// TestGroupPodSets: a group is its leader (its own template, else the
// workers') and size-1 workers; a group of one is the leader alone; a size
// below 1 is refused, naming the field.
func TestGroupPodSets(t *testing.T) {
	leader := template("1")
	cases := []struct {
		name    string
		l       *lwsv1.LeaderWorkerSet
		counts  []int32
		leaderC string
	}{
		{"own leader template", set(ptr.To[int32](4), &leader), []int32{1, 3}, "1"},
		{"leader from workers", set(ptr.To[int32](3), nil), []int32{1, 2}, "2"},
		{"size unset is one", set(nil, nil), []int32{1}, "2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sets, err := Wrap(tc.l).PodSets()
			if err != nil {
				t.Fatal(err)
			}
			if len(sets) != len(tc.counts) {
				t.Fatalf("%d pod sets, want %d", len(sets), len(tc.counts))
			}
			for i, c := range tc.counts {
				if sets[i].Count != c {
					t.Errorf("set %s has %d pods, want %d", sets[i].Name, sets[i].Count, c)
				}
			}
			if sets[0].Name != LeaderSet || (len(sets) > 1 && sets[1].Name != WorkersSet) {
				t.Errorf("sets named %s, want leader then workers", sets[0].Name)
			}
			if got := sets[0].Template.Spec.Containers[0].Resources.Requests.Cpu().String(); got != tc.leaderC {
				t.Errorf("leader asks for cpu %s, want %s", got, tc.leaderC)
			}
		})
	}
	if _, err := GroupPodSets(set(ptr.To[int32](0), nil)); err == nil || !strings.Contains(err.Error(), "spec.leaderWorkerTemplate.size") {
		t.Errorf("size 0: error %v, want one naming spec.leaderWorkerTemplate.size", err)
	}
}

// TestSetPodLabels: both templates take the quota, never the unit label;
// a template label naming another quota is reported with its place.
func TestSetPodLabels(t *testing.T) {
	leader := template("1")
	leader.Labels = map[string]string{schedv1alpha1.QuotaNameLabel: "old"}
	l := set(ptr.To[int32](2), &leader)
	replaced := Wrap(l).SetPodLabels(framework.PodLabels("q", "s-leaderworkerset"))
	if len(replaced) != 1 || replaced[0].Where != "spec.leaderWorkerTemplate.leaderTemplate" || replaced[0].Old != "old" {
		t.Errorf("replaced %+v, want the leader template's quota old", replaced)
	}
	for _, labels := range []map[string]string{l.Spec.LeaderWorkerTemplate.LeaderTemplate.Labels, l.Spec.LeaderWorkerTemplate.WorkerTemplate.Labels} {
		if labels[schedv1alpha1.QuotaNameLabel] != "q" || labels[schedv1alpha1.QueueUnitLabel] != "" {
			t.Errorf("template labels %v, want quota q and no unit", labels)
		}
	}
	if q, agree := TemplateQuota(l); q != "q" || !agree {
		t.Errorf("TemplateQuota = %q, %v after labelling", q, agree)
	}
	l.Spec.LeaderWorkerTemplate.LeaderTemplate.Labels[schedv1alpha1.QuotaNameLabel] = "other"
	if _, agree := TemplateQuota(l); agree {
		t.Error("templates naming two quotas agree")
	}
}

// TestPods: which pods the pod webhook holds, their group and their role,
// and the units' names.
func TestPods(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Labels: map[string]string{
		lwsv1.SetNameLabelKey: "s", schedv1alpha1.QuotaNameLabel: "q", lwsv1.GroupIndexLabelKey: "3", lwsv1.WorkerIndexLabelKey: "0",
	}}}
	if !HoldsPod(p) || !IsLeader(p) {
		t.Errorf("a leader of a held set: HoldsPod %v, IsLeader %v", HoldsPod(p), IsLeader(p))
	}
	if g, ok := GroupOf(p); !ok || g != 3 {
		t.Errorf("group %d, %v; want 3", g, ok)
	}
	p.Labels[lwsv1.GroupIndexLabelKey] = "x"
	if _, ok := GroupOf(p); ok {
		t.Error("a group index that is no number was read")
	}
	p.Namespace = metav1.NamespaceSystem
	if HoldsPod(p) {
		t.Error("a kube-system pod is held")
	}
	p.Namespace = "team"
	delete(p.Labels, schedv1alpha1.QuotaNameLabel)
	if HoldsPod(p) {
		t.Error("a pod without the quota label is held")
	}
	ext := New(framework.ExtensionOptions{})
	if got := UnitName(&ext, "s", 1); got != "s-1-leaderworkerset" {
		t.Errorf("unit of group 1 is %q", got)
	}
}
