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

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
)

// quotaSpec is an ElasticQuota in namespace default.
type quotaSpec struct {
	name, parent, min, max string
	labels, annotations    map[string]string
}

func createQuota(t *testing.T, q quotaSpec) {
	t.Helper()
	labels := map[string]string{}
	for k, v := range q.labels {
		labels[k] = v
	}
	if q.parent != "" {
		labels[eqv1alpha1.ParentLabel] = q.parent
	}
	eq := &eqv1alpha1.ElasticQuota{
		ObjectMeta: metav1.ObjectMeta{Name: q.name, Namespace: "default", Labels: labels, Annotations: q.annotations},
		Spec: eqv1alpha1.ElasticQuotaSpec{Max: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(q.max), corev1.ResourceMemory: resource.MustParse("1Ti"),
		}},
	}
	if q.min != "" {
		eq.Spec.Min = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q.min)}
	}
	create(t, eq)
	eventually(t, "Queue koord-queue/"+q.name, func(ctx context.Context) (bool, error) {
		err := get(ctx, schedv1alpha1.QueueNamespace, q.name, &schedv1alpha1.Queue{})
		return err == nil, client.IgnoreNotFound(err)
	})
}

// jobs creates suspended 1-CPU jobs (each runs runFor once admitted) and
// deletes them when the test ends.
func jobs(t *testing.T, quota string, names []string, cpu string, runFor time.Duration) {
	t.Helper()
	for _, n := range names {
		j := suspendedJob(n, quota, cpu, runFor)
		create(t, j)
		t.Cleanup(func() {
			_ = env.Client.Delete(context.Background(), &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: "default"}},
				client.PropagationPolicy(metav1.DeletePropagationBackground))
		})
	}
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

func admittedCount(ctx context.Context, jobNames []string) (int, error) {
	n := 0
	for _, name := range jobNames {
		p, err := phaseOf(ctx, "default", name)
		if err != nil {
			return 0, err
		}
		if admitted(p) {
			n++
		}
	}
	return n, nil
}

// TestQuotaThatDoesNotLendKeepsItsMin: allow-lent-resource: "false" keeps
// the quota's unused min from its sibling, and its own job gets it at once.
func TestQuotaThatDoesNotLendKeepsItsMin(t *testing.T) {
	// Koordinator's webhook asks a parent to say so, and its min to cover
	// its children's.
	createQuota(t, quotaSpec{name: "e2e-nl-parent", min: "10", max: "10", labels: map[string]string{eqv1alpha1.IsParentLabel: "true"}})
	createQuota(t, quotaSpec{name: "e2e-nl-keeper", parent: "e2e-nl-parent", min: "6", max: "10",
		labels: map[string]string{eqv1alpha1.AllowLentResourceLabel: "false"}})
	createQuota(t, quotaSpec{name: "e2e-nl-borrower", parent: "e2e-nl-parent", max: "10"})
	borrowers := names("e2e-nl-b", 6)
	jobs(t, "e2e-nl-borrower", borrowers, "1", 5*time.Minute)
	eventually(t, "4 borrower jobs admitted, 2 waiting for the kept min", func(ctx context.Context) (bool, error) {
		n, err := admittedCount(ctx, borrowers)
		if err != nil || n > 4 {
			return false, fmt.Errorf("%d borrower jobs admitted (err %w): the keeper's min was lent", n, err)
		}
		waiting := 0
		for _, name := range borrowers {
			u, err := queueUnit(ctx, "default", name)
			if err == nil && strings.Contains(u.Status.Message, "kept by quotas that do not lend their min") {
				waiting++
			}
		}
		return n == 4 && waiting == 2, nil
	})
	jobs(t, "e2e-nl-keeper", []string{"e2e-nl-keep"}, "6", 5*time.Minute)
	waitPhase(t, "default", "e2e-nl-keep", "dequeued at once", admitted)
	waitJobReleased(t, "default", "e2e-nl-keep")
}

// TestSharedWeightSharesTheParent: three quotas weighted 1:1:2 under a
// 12-CPU parent, all asking for more, run 3/3/6.
func TestSharedWeightSharesTheParent(t *testing.T) {
	weights := map[string]int{"e2e-sw-a": 1, "e2e-sw-b": 1, "e2e-sw-c": 2}
	// The parent has no room until every job is there, so sharing starts
	// with all of them. (It must exist first: Koordinator's webhook refuses
	// a child of a quota that does not exist or is not a parent.)
	createQuota(t, quotaSpec{name: "e2e-sw-parent", max: "0", labels: map[string]string{eqv1alpha1.IsParentLabel: "true"}})
	for name, w := range weights {
		createQuota(t, quotaSpec{name: name, parent: "e2e-sw-parent", max: "12",
			annotations: map[string]string{eqv1alpha1.SharedWeightAnnotation: fmt.Sprintf(`{"cpu":"%d"}`, w)}})
		jobs(t, name, names(name, 8), "1", 5*time.Minute)
	}
	for name := range weights {
		for _, job := range names(name, 8) {
			eventually(t, job+" waits for room in the parent", func(ctx context.Context) (bool, error) {
				u, err := queueUnit(ctx, "default", job)
				return err == nil && strings.Contains(u.Status.Message, "e2e-sw-parent"), err
			})
		}
	}
	eventually(t, "the parent's max raised to 12", func(ctx context.Context) (bool, error) {
		eq := &eqv1alpha1.ElasticQuota{}
		if err := get(ctx, "default", "e2e-sw-parent", eq); err != nil {
			return false, err
		}
		eq.Spec.Max[corev1.ResourceCPU] = resource.MustParse("12")
		return true, env.Client.Update(ctx, eq)
	})
	eventually(t, "the parent shared 3/3/6", func(ctx context.Context) (bool, error) {
		total := 0
		got := map[string]int{}
		for name := range weights {
			n, err := admittedCount(ctx, names(name, 8))
			if err != nil {
				return false, err
			}
			got[name], total = n, total+n
		}
		if total < 12 {
			return false, nil
		}
		for name, w := range weights {
			if got[name] != 3*w {
				return false, fmt.Errorf("shares %v, want 3/3/6", got)
			}
		}
		return true, nil
	})
}

// TestMaxWaitReservesForABigJob: under Priority a small job overtakes a big
// one that does not fit; once the big one has waited longer than the quota's
// koord-queue/max-wait it reserves: a later small job is held back, and the
// big job runs first when room is freed.
func TestMaxWaitReservesForABigJob(t *testing.T) {
	createQuota(t, quotaSpec{name: "e2e-maxwait", max: "24", annotations: map[string]string{schedv1alpha1.MaxWaitAnnotation: "5s"}})
	running := names("e2e-mw-run", 8)
	jobs(t, "e2e-maxwait", running, "1", 25*time.Second)
	for _, name := range running {
		waitPhase(t, "default", name, "dequeued", admitted)
	}
	jobs(t, "e2e-maxwait", []string{"e2e-mw-big"}, "20", 2*time.Second)
	jobs(t, "e2e-maxwait", []string{"e2e-mw-early"}, "1", 25*time.Second)
	waitPhase(t, "default", "e2e-mw-early", "a small job overtakes the big one before the bound", admitted)
	eventually(t, "the big job reserves once its bound has passed", func(ctx context.Context) (bool, error) {
		u, err := queueUnit(ctx, "default", "e2e-mw-big")
		return err == nil && strings.Contains(u.Status.Message, "reserving"), err
	})
	jobs(t, "e2e-maxwait", []string{"e2e-mw-late"}, "1", 2*time.Second)
	waitPhase(t, "default", "e2e-mw-late", "Enqueued, not admitted", isPhase(schedv1alpha1.QueueUnitPhaseEnqueued))
	consistently(t, hold, "the late small job is held back", func(ctx context.Context) error {
		if p, err := phaseOf(ctx, "default", "e2e-mw-late"); err != nil || admitted(p) {
			return fmt.Errorf("late small job phase %q (err %w) while the big one reserves", p, err)
		}
		return nil
	})
	waitPhase(t, "default", "e2e-mw-big", "dequeued once the running jobs finished", admitted)
	waitPhase(t, "default", "e2e-mw-late", "dequeued after the big one", admitted)
}
