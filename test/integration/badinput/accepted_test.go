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

package badinput

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
)

// acceptance is a case the API server accepts: run creates the bad input,
// checks its Warning event and safe behaviour, and returns the objects whose
// writes must stay bounded.
type acceptance struct {
	name string
	run  func(t *testing.T) []client.Object
}

var acceptances = []acceptance{
	{"quota cycle", func(t *testing.T) []client.Object {
		a, b := quota(tenant, "cycle-a", "cycle-b", "", "10"), quota(tenant, "cycle-b", "cycle-a", "", "10")
		create(t, a, b)
		j := job(tenant, "in-cycle", "cycle-a", "1")
		create(t, j)
		unitOf(t, tenant, j.Name, "waiting on the cycle", waitingWith("cycle"))
		warning(t, "ElasticQuota", tenant, "cycle-a", "InvalidQuotaTree", "cycle")
		return []client.Object{a, b, j, unitOf(t, tenant, j.Name, "unit", anyUnit)}
	}},
	{"quota that is its own parent", func(t *testing.T) []client.Object {
		a := quota(tenant, "selfish", "selfish", "", "10")
		create(t, a)
		j := job(tenant, "in-selfish", "selfish", "1")
		create(t, j)
		unitOf(t, tenant, j.Name, "waiting on the cycle", waitingWith("cycle"))
		warning(t, "ElasticQuota", tenant, "selfish", "InvalidQuotaTree", "cycle")
		return []client.Object{a, j}
	}},
	{"quota whose parent is missing", func(t *testing.T) []client.Object {
		child := quota(tenant, "orphan", "lost-parent", "", "10")
		create(t, child)
		j := job(tenant, "in-orphan", "orphan", "1")
		create(t, j)
		unitOf(t, tenant, j.Name, "waiting for the parent", waitingWith("does not exist"))
		warning(t, "ElasticQuota", tenant, "orphan", "InvalidQuotaTree", "lost-parent")
		// The parent's arrival lets the unit through.
		parent := quota(tenant, "lost-parent", "", "", "10")
		parent.Labels[eqv1alpha1.IsParentLabel] = "true"
		create(t, parent)
		unitOf(t, tenant, j.Name, "admitted once the parent exists", admitted)
		return []client.Object{child, parent, j}
	}},
	{"children's min summing above the parent's", func(t *testing.T) []client.Object {
		parent := quota(tenant, "small-parent", "", "4", "4")
		parent.Labels[eqv1alpha1.IsParentLabel] = "true"
		c1, c2 := quota(tenant, "greedy-1", "small-parent", "3", "4"), quota(tenant, "greedy-2", "small-parent", "3", "4")
		create(t, parent, c1, c2)
		j1, j2, j3 := job(tenant, "greedy-1a", "greedy-1", "3"), job(tenant, "greedy-2a", "greedy-2", "1"), job(tenant, "greedy-2b", "greedy-2", "1")
		create(t, j1, j2)
		unitOf(t, tenant, j1.Name, "admitted", admitted)
		unitOf(t, tenant, j2.Name, "admitted", admitted)
		// The parent's max holds whatever the children's min promise.
		create(t, j3)
		u := unitOf(t, tenant, j3.Name, "waiting on the parent's max", waitingWith("small-parent"))
		t.Logf("third unit waits: %s", u.Status.Message)
		warning(t, "ElasticQuota", tenant, "small-parent", "InvalidQuotaMin", "greedy-1")
		return []client.Object{parent, c1, c2, j1, j2, j3}
	}},
	{"huge quota max in cpu", func(t *testing.T) []client.Object {
		eq := quota(tenant, "huge-cpu", "", "", "100P")
		create(t, eq)
		j := job(tenant, "in-huge-cpu", "huge-cpu", "1000")
		create(t, j)
		unitOf(t, tenant, j.Name, "admitted under a max too big to count", admitted)
		return []client.Object{eq, j}
	}},
	{"huge quota max in memory", func(t *testing.T) []client.Object {
		eq := eqWith("huge-mem", nil, quotaList("memory", "1e1000"))
		create(t, eq)
		j := job(tenant, "in-huge-mem", "huge-mem", "")
		j.Spec.Template.Spec.Containers[0].Resources.Requests = quotaList("memory", "1Ti")
		create(t, j)
		unitOf(t, tenant, j.Name, "admitted under a max too big to count", admitted)
		return []client.Object{eq, j}
	}},
	{"fractional cpu in quota and jobs", func(t *testing.T) []client.Object {
		eq := quota(tenant, "half-core", "", "", "0.5")
		create(t, eq)
		a, b := job(tenant, "half-a", "half-core", "0.25"), job(tenant, "half-b", "half-core", "250m")
		c := job(tenant, "half-c", "half-core", "0.0001")
		create(t, a, b)
		unitOf(t, tenant, a.Name, "admitted", admitted)
		unitOf(t, tenant, b.Name, "admitted", admitted)
		// 0.0001 CPU counts as 1m, which no longer fits.
		create(t, c)
		unitOf(t, tenant, c.Name, "waiting for 1m", waitingWith("1m"))
		return []client.Object{eq, a, b, c}
	}},
	{"job asking more than its quota can ever give", func(t *testing.T) []client.Object {
		eq := quota(tenant, "tiny", "", "", "1")
		create(t, eq)
		j := job(tenant, "too-big", "tiny", "1000000")
		create(t, j)
		unitOf(t, tenant, j.Name, "never fits", waitingWith("can never fit"))
		warning(t, "QueueUnit", tenant, unitOf(t, tenant, j.Name, "unit", anyUnit).Name, "FailedScheduling", "can never fit")
		return []client.Object{eq, j}
	}},
	{"job labelled with a quota that does not exist", func(t *testing.T) []client.Object {
		j := job(tenant, "no-such-quota", "absent", "1")
		create(t, j)
		u := unitOf(t, tenant, j.Name, "waiting for its queue", func(u *schedv1alpha1.QueueUnit) bool {
			return u.Status.Phase == schedv1alpha1.QueueUnitPhaseEnqueued && u.Status.Message != ""
		})
		t.Logf("message: %s", u.Status.Message)
		warning(t, "QueueUnit", tenant, u.Name, "QueueNotFound", "absent")
		eq := quota(tenant, "absent", "", "", "10")
		create(t, eq)
		unitOf(t, tenant, j.Name, "admitted once the quota exists", admitted)
		return []client.Object{j, eq}
	}},
	{"job quota label that is not an object name", func(t *testing.T) []client.Object {
		j := job(tenant, "bad-name", "Team_A", "1")
		create(t, j)
		u := unitOf(t, tenant, j.Name, "waiting", func(u *schedv1alpha1.QueueUnit) bool {
			return u.Status.Phase == schedv1alpha1.QueueUnitPhaseEnqueued && u.Status.Message != ""
		})
		t.Logf("message: %s", u.Status.Message)
		warning(t, "QueueUnit", tenant, u.Name, "QueueNotFound", "Team_A")
		return []client.Object{j, u}
	}},
	{"job without requests", func(t *testing.T) []client.Object {
		// Like a BestEffort pod, it is admitted and charged nothing.
		j := job(tenant, "no-requests", goodQuota, "")
		create(t, j)
		u := unitOf(t, tenant, j.Name, "admitted", admitted)
		for _, a := range u.Status.Admissions {
			if len(a.Resources) != 0 {
				t.Errorf("a job without requests is charged %v", a.Resources)
			}
		}
		waitJobResumed(t, tenant, j.Name)
		return []client.Object{j}
	}},
	{"job with zero parallelism", func(t *testing.T) []client.Object {
		// No pod runs: admitted with a pod set of 0, charged nothing.
		j := job(tenant, "zero-parallelism", goodQuota, "1")
		j.Spec.Parallelism = ptr.To[int32](0)
		create(t, j)
		u := unitOf(t, tenant, j.Name, "admitted", admitted)
		if len(u.Spec.PodSet) != 1 || u.Spec.PodSet[0].Count != 0 {
			t.Errorf("pod sets %+v, want one of 0 pods", u.Spec.PodSet)
		}
		for _, a := range u.Status.Admissions {
			if a.Replicas != 0 {
				t.Errorf("admitted %d replicas of a job that runs none", a.Replicas)
			}
		}
		return []client.Object{j}
	}},
	{"unit whose job was deleted", func(t *testing.T) []client.Object {
		j := job(tenant, "deleted-job", "tiny", "1000000")
		create(t, j)
		u := unitOf(t, tenant, j.Name, "waiting", waitingWith("can never fit"))
		if err := shared.c.Delete(context.Background(), j, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the unit of the deleted job gone", func(ctx context.Context) (bool, error) {
			err := shared.c.Get(ctx, client.ObjectKeyFromObject(u), &schedv1alpha1.QueueUnit{})
			return err != nil && client.IgnoreNotFound(err) == nil, nil
		})
		return nil
	}},
	{"unit written by hand for a job that does not exist", func(t *testing.T) []client.Object {
		u := unit("ghost", func(u *schedv1alpha1.QueueUnit) {
			u.Spec.ConsumerRef.APIVersion, u.Spec.ConsumerRef.Kind = "batch/v1", "Job"
		})
		create(t, u)
		// koord-queue-controllers removes a Job's unit whose Job is not there.
		eventually(t, "the ghost unit removed", func(ctx context.Context) (bool, error) {
			err := shared.c.Get(ctx, client.ObjectKeyFromObject(u), &schedv1alpha1.QueueUnit{})
			return err != nil && client.IgnoreNotFound(err) == nil, nil
		})
		return nil
	}},
	{"unit whose consumerRef names a job of another namespace", func(t *testing.T) []client.Object {
		// victim waits in namespace other for a quota that does not exist.
		victim := job(other, "victim", "nowhere", "1")
		create(t, victim)
		unitOf(t, other, victim.Name, "victim waiting", waitingWith("not found"))
		u := unit("cross-ns", func(u *schedv1alpha1.QueueUnit) {
			u.Spec.ConsumerRef = &corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Namespace: other, Name: victim.Name, UID: victim.UID}
		})
		create(t, u)
		shared.probe(t)
		shared.probe(t)
		// Whatever becomes of the tenant's unit, the other namespace's job
		// stays suspended: a unit only ever resumes the job of its own
		// namespace.
		got := &batchv1.Job{}
		if err := shared.c.Get(context.Background(), client.ObjectKeyFromObject(victim), got); err != nil {
			t.Fatal(err)
		}
		if !ptr.Deref(got.Spec.Suspend, false) {
			t.Fatal("a unit of namespace tenant resumed a job of namespace other")
		}
		return []client.Object{u, victim}
	}},
	{"unit naming a Queue in another namespace", func(t *testing.T) []client.Object {
		u := unit("other-queue", func(u *schedv1alpha1.QueueUnit) { u.Spec.Queue = "koord-queue/" + goodQuota })
		create(t, u)
		eventually(t, "the unit waiting for its queue", func(ctx context.Context) (bool, error) {
			got := &schedv1alpha1.QueueUnit{}
			if err := shared.c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
				return false, err
			}
			return waitingWith("not found")(got), nil
		})
		warning(t, "QueueUnit", tenant, u.Name, "QueueNotFound", "koord-queue/"+goodQuota)
		return []client.Object{u}
	}},
	{"job of almost 1 MiB", func(t *testing.T) []client.Object {
		j := job(tenant, "one-mib", goodQuota, "1")
		j.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "BIG", Value: strings.Repeat("x", 1<<20)}}
		create(t, j)
		unitOf(t, tenant, j.Name, "admitted", admitted)
		return []client.Object{j}
	}},
	{"queue policy label that is not a policy", func(t *testing.T) []client.Object {
		eq := quota(tenant, "fifo", "", "", "10")
		eq.Labels[schedv1alpha1.QueuePolicyLabel] = "Fifo"
		create(t, eq)
		warning(t, "ElasticQuota", tenant, "fifo", "InvalidQueuePolicy", "Fifo")
		j := job(tenant, "in-fifo", "fifo", "1")
		create(t, j)
		unitOf(t, tenant, j.Name, "admitted by the default policy", admitted)
		return []client.Object{eq, j}
	}},
	{"shared-weight annotation that is not a resource list", func(t *testing.T) []client.Object {
		eq := quota(tenant, "weighty", "", "", "10")
		eq.Annotations = map[string]string{eqv1alpha1.SharedWeightAnnotation: "ten"}
		create(t, eq)
		warning(t, "ElasticQuota", tenant, "weighty", "InvalidSharedWeight", "ten")
		j := job(tenant, "in-weighty", "weighty", "1")
		create(t, j)
		unitOf(t, tenant, j.Name, "admitted", admitted)
		return []client.Object{eq, j}
	}},
	{"namespaces annotation that is not a JSON list", func(t *testing.T) []client.Object {
		eq := quota(tenant, "sharing", "", "", "10")
		eq.Annotations = map[string]string{eqv1alpha1.NamespacesAnnotation: "other,tenant"}
		create(t, eq)
		warning(t, "ElasticQuota", tenant, "sharing", "InvalidNamespaces", "other,tenant")
		j := job(tenant, "in-sharing", "sharing", "1")
		create(t, j)
		unitOf(t, tenant, j.Name, "admitted in its own namespace", admitted)
		return []client.Object{eq, j}
	}},
	{"max-depth annotation that is not a number", func(t *testing.T) []client.Object {
		eq := quota(tenant, "deep", "", "", "10")
		eq.Annotations = map[string]string{schedv1alpha1.MaxDepthAnnotation: "deep"}
		create(t, eq)
		warning(t, "Queue", schedv1alpha1.QueueNamespace, "deep", "InvalidAnnotation", "deep")
		j := job(tenant, "in-deep", "deep", "1")
		create(t, j)
		unitOf(t, tenant, j.Name, "admitted", admitted)
		return []client.Object{eq, j}
	}},
	// What koord-manager's webhook refuses, met without it (docs/protocol.md).
	{"quota name used in two namespaces", func(t *testing.T) []client.Object {
		first := quota(tenant, "twice", "", "", "1")
		create(t, first)
		j := job(tenant, "in-twice", "twice", "1")
		create(t, j)
		unitOf(t, tenant, j.Name, "admitted by the first quota", admitted)
		second := quota(other, "twice", "", "", "100")
		create(t, second)
		warning(t, "ElasticQuota", other, "twice", "DuplicateQuotaName", tenant+"/twice")
		// The first still counts: its max of 1 is full.
		k := job(tenant, "in-twice-2", "twice", "1")
		create(t, k)
		unitOf(t, tenant, k.Name, "waiting on the first quota's max", waitingWith("max 1"))
		return []client.Object{first, second, j, k}
	}},
	{"namespace listed by two quotas", func(t *testing.T) []client.Object {
		a, b := quota(tenant, "lists-a", "", "", "10"), quota(tenant, "lists-b", "", "", "10")
		a.Annotations = map[string]string{eqv1alpha1.NamespacesAnnotation: `["other"]`}
		b.Annotations = map[string]string{eqv1alpha1.NamespacesAnnotation: `["other"]`}
		create(t, a, b)
		// To koord-queue the list says who may use a quota: both may be used.
		ja, jb := job(other, "uses-a", "lists-a", "1"), job(other, "uses-b", "lists-b", "1")
		create(t, ja, jb)
		unitOf(t, other, ja.Name, "admitted", admitted)
		unitOf(t, other, jb.Name, "admitted", admitted)
		return []client.Object{a, b, ja, jb}
	}},
	{"job charged to a parent quota", func(t *testing.T) []client.Object {
		parent := quota(tenant, "a-parent", "", "", "10")
		parent.Labels[eqv1alpha1.IsParentLabel] = "true"
		create(t, parent)
		j := job(tenant, "in-parent", "a-parent", "1")
		create(t, j)
		u := unitOf(t, tenant, j.Name, "refused for a parent quota", waitingWith("is a parent quota"))
		if c := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionQuotaReserved); c == nil || c.Reason != "ParentQuota" {
			t.Errorf("condition %+v; want reason ParentQuota", c)
		}
		return []client.Object{parent, j}
	}},
	{"job charged to Koordinator's default quota", func(t *testing.T) []client.Object {
		j := job(tenant, "in-default-quota", eqv1alpha1.DefaultQuotaName, "1")
		create(t, j)
		u := unitOf(t, tenant, j.Name, "refused for Koordinator's own quota", waitingWith("one of Koordinator's own quotas"))
		if c := meta.FindStatusCondition(u.Status.Conditions, schedv1alpha1.ConditionQuotaReserved); c == nil || c.Reason != "SystemQuota" {
			t.Errorf("condition %+v; want reason SystemQuota", c)
		}
		return []client.Object{j}
	}},
	{"quota deleted under a waiting unit", func(t *testing.T) []client.Object {
		eq := quota(tenant, "doomed", "", "", "1")
		create(t, eq)
		a, b := job(tenant, "doomed-a", "doomed", "1"), job(tenant, "doomed-b", "doomed", "1")
		create(t, a)
		unitOf(t, tenant, a.Name, "admitted", admitted)
		create(t, b)
		unitOf(t, tenant, b.Name, "waiting", waitingWith("insufficient"))
		if err := shared.c.Delete(context.Background(), eq); err != nil {
			t.Fatal(err)
		}
		u := unitOf(t, tenant, b.Name, "waiting for its queue", func(u *schedv1alpha1.QueueUnit) bool {
			return u.Status.Phase == schedv1alpha1.QueueUnitPhaseEnqueued && strings.Contains(u.Status.Message, "doomed") && !strings.Contains(u.Status.Message, "insufficient")
		})
		t.Logf("message: %s", u.Status.Message)
		warning(t, "QueueUnit", tenant, u.Name, "QueueNotFound", "doomed")
		return []client.Object{a, b}
	}},
}

func anyUnit(*schedv1alpha1.QueueUnit) bool { return true }

// TestAccepted runs every accepted case, then checks its objects stay quiet
// while other units are admitted.
func TestAccepted(t *testing.T) {
	h := setup(t)
	for _, tc := range acceptances {
		t.Run(tc.name, func(t *testing.T) {
			objs := tc.run(t)
			var watched []client.Object
			for _, o := range objs {
				watched = append(watched, o)
				if j, ok := o.(*batchv1.Job); ok {
					if u := findUnit(j); u != nil {
						watched = append(watched, u)
					}
				}
			}
			h.bounded(t, watched...)
		})
	}
}

// findUnit is the unit of job j, nil when it has none.
func findUnit(j *batchv1.Job) *schedv1alpha1.QueueUnit {
	list := &schedv1alpha1.QueueUnitList{}
	if err := shared.c.List(context.Background(), list, client.InNamespace(j.Namespace)); err != nil {
		return nil
	}
	for i := range list.Items {
		if r := list.Items[i].Spec.ConsumerRef; r != nil && r.Kind == "Job" && r.Name == j.Name {
			return &list.Items[i]
		}
	}
	return nil
}
