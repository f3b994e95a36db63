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

package chaos_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	eqv1alpha1 "github.com/koordinator-sh/koord-queue/apis/thirdparty/elasticquota/v1alpha1"
	"github.com/koordinator-sh/koord-queue/test/cluster"
)

// namespace holds the quotas, jobs, units and pods of the run.
const namespace = "chaos"

// checkName is the AdmissionCheck required by the queue of checkedLeaf,
// answered by approve.
const (
	checkName   = "chaos-approval"
	checkedLeaf = "b3-y"
)

// quotaSpec is one ElasticQuota of the tree.
type quotaSpec struct {
	name, parent       string
	min, max           string // CPU; memory is 4 GiB per CPU
	isParent, preempts bool
	// offStream: the stream sends it no job (a fault's own quota).
	offStream bool
}

// unheldLeaf is a quota of its own, out of the organisations, for the jobs
// created while the webhook is down: they may run before admission (the
// documented price of failurePolicy Ignore), and its max (4 CPUs) holds
// them all, so they cannot push a quota the run judges above its max.
const unheldLeaf = "unheld"

// unheldJobs is how many such jobs the webhook fault creates: 1 CPU each.
const unheldJobs = 4

// quotaTree is three levels, 20 quotas, and unheldLeaf beside them: two organisations (min 40, max 60
// CPU of the 128 the nodes have), three teams each (min 12, max 30: they
// borrow from each other inside their organisation) and two leaves per team
// (min 4, max 16), where the jobs go. The leaves of a1 and b1-x let a unit
// preempt lower-priority units of its own quota; reclaim is on everywhere.
func quotaTree() []quotaSpec {
	var out []quotaSpec
	for _, org := range []string{"a", "b"} {
		out = append(out, quotaSpec{name: "org-" + org, min: "40", max: "60", isParent: true})
		for _, team := range []string{"1", "2", "3"} {
			t := org + team
			out = append(out, quotaSpec{name: t, parent: "org-" + org, min: "12", max: "30", isParent: true})
			for _, leaf := range []string{"x", "y"} {
				name := t + "-" + leaf
				out = append(out, quotaSpec{name: name, parent: t, min: "4", max: "16", preempts: t == "a1" || name == "b1-x"})
			}
		}
	}
	return append(out, quotaSpec{name: unheldLeaf, min: "4", max: "4", offStream: true})
}

func leaves() []string {
	var out []string
	for _, q := range quotaTree() {
		if !q.isParent && !q.offStream {
			out = append(out, q.name)
		}
	}
	return out
}

// setUp creates the namespace, the AdmissionCheck and the Queue that requires
// it (before its ElasticQuota, so the queue koord-queue finds is ours), and
// the quota tree.
func setUp(ctx context.Context, c client.Client) error {
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		&schedv1alpha1.AdmissionCheck{
			ObjectMeta: metav1.ObjectMeta{Name: checkName},
			Spec:       schedv1alpha1.AdmissionCheckSpec{ControllerName: "chaos.test/approver"},
		},
		&schedv1alpha1.Queue{
			ObjectMeta: metav1.ObjectMeta{Name: checkedLeaf, Namespace: cluster.Namespace},
			Spec: schedv1alpha1.QueueSpec{
				QueuePolicy:     "Priority",
				Priority:        ptr.To[int32](1000),
				AdmissionChecks: []schedv1alpha1.AdmissionCheckWithSelector{{Name: checkName}},
			},
		},
	}
	for _, q := range quotaTree() {
		objs = append(objs, elasticQuota(q))
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}

func elasticQuota(q quotaSpec) *eqv1alpha1.ElasticQuota {
	cpu := func(v string) corev1.ResourceList {
		n, _ := strconv.Atoi(v)
		return corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(v),
			corev1.ResourceMemory: resource.MustParse(strconv.Itoa(4*n) + "Gi"),
		}
	}
	eq := &eqv1alpha1.ElasticQuota{
		ObjectMeta: metav1.ObjectMeta{Name: q.name, Namespace: namespace, Labels: map[string]string{}, Annotations: map[string]string{}},
		Spec:       eqv1alpha1.ElasticQuotaSpec{Min: cpu(q.min), Max: cpu(q.max)},
	}
	if q.parent != "" {
		eq.Labels[eqv1alpha1.ParentLabel] = q.parent
	}
	if q.isParent {
		eq.Labels[eqv1alpha1.IsParentLabel] = "true"
	}
	if q.preempts {
		eq.Annotations[schedv1alpha1.PreemptionPolicyAnnotation] = string(schedv1alpha1.PreemptionLowerPriority)
	}
	return eq
}

// job is a suspended one-pod Job of quota (labelled on the Job and its pod
// template) asking for cpu whole CPUs, with a priority, whose pod runs for
// runFor on its fake node.
func job(name, quota string, cpu, priority int, runFor time.Duration) *batchv1.Job {
	labels := map[string]string{schedv1alpha1.QuotaNameLabel: quota, "chaos": "true"}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: namespace, Labels: labels,
			Annotations: map[string]string{schedv1alpha1.PriorityAnnotation: strconv.Itoa(priority)},
		},
		Spec: batchv1.JobSpec{
			Suspend:      ptr.To(true),
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      labels,
					Annotations: map[string]string{"pod-complete.stage.kwok.x-k8s.io/delay": runFor.String()},
				},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "work", Image: "busybox:stable", Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{
							corev1.ResourceCPU:    resource.MustParse(strconv.Itoa(cpu)),
							corev1.ResourceMemory: resource.MustParse(strconv.Itoa(2*cpu) + "Gi"),
						},
					}}},
				},
			},
		},
	}
}

// jobMaker names and shapes jobs from a seeded source, so a run can be
// replayed: an eighth of them go to a1-x (so it borrows and its siblings
// reclaim), the rest spread over every leaf; 1 to 3 CPUs; priorities 0 to 3;
// 1 to 4 s of running.
type jobMaker struct {
	mu     sync.Mutex
	rnd    *rand.Rand
	leaves []string
	next   int
}

func newJobMaker(seed uint64) *jobMaker {
	return &jobMaker{rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), leaves: leaves()}
}

func (m *jobMaker) make() *batchv1.Job {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	quota := "a1-x"
	if m.rnd.IntN(8) > 0 {
		quota = m.leaves[m.rnd.IntN(len(m.leaves))]
	}
	runFor := time.Second + time.Duration(m.rnd.IntN(3000))*time.Millisecond
	return job(fmt.Sprintf("j-%05d", m.next), quota, 1+m.rnd.IntN(3), m.rnd.IntN(4), runFor)
}

// named returns a job of the maker's name sequence with the shape given.
func (m *jobMaker) named(quota string, cpu, priority int, runFor time.Duration) *batchv1.Job {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next++
	return job(fmt.Sprintf("j-%05d", m.next), quota, cpu, priority, runFor)
}

// createJob creates j, retrying through the API server's restarts until ctx
// ends.
func createJob(ctx context.Context, c client.Client, j *batchv1.Job) error {
	var last error
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		last = c.Create(ctx, j.DeepCopy())
		return last == nil || apierrors.IsAlreadyExists(last), nil
	})
	if err != nil {
		return fmt.Errorf("create job %s: %w (last error: %w)", j.Name, err, last)
	}
	return nil
}
