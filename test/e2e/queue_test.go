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

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/test/cluster"
)

// TestQueueExamples applies the hand-written Queue examples as written and
// reads them back.
func TestQueueExamples(t *testing.T) {
	applyGuide(t, "queue-intelligent.yaml")
	q := &schedv1alpha1.Queue{}
	if err := get(ctx(t), "koord-queue", "my-queue", q); err != nil {
		t.Fatal(err)
	}
	if q.Spec.QueuePolicy != "Intelligent" || ptr.Deref(q.Spec.Priority, 0) != 1000 || q.Annotations["koord-queue/priority-threshold"] != "5" {
		t.Errorf("my-queue = %+v, annotations %v", q.Spec, q.Annotations)
	}

	applyGuide(t, "queue-admission-check.yaml")
	if err := get(ctx(t), "koord-queue", "checked-queue", q); err != nil {
		t.Fatal(err)
	}
	if len(q.Spec.AdmissionChecks) != 1 || q.Spec.AdmissionChecks[0].Name != "prov-req-check" ||
		q.Spec.AdmissionChecks[0].LabelSelector == nil || q.Spec.AdmissionChecks[0].LabelSelector.MatchLabels["requires-provisioning"] != "true" {
		t.Errorf("checked-queue admissionChecks = %+v", q.Spec.AdmissionChecks)
	}
}

// TestQueueUnitPriorityExample applies the hand-written QueueUnit of
// 设置 QueueUnit 的优先级 (with its queue's ElasticQuota) and checks that it
// is accepted as written and that the scheduler picks it up (a phase is set).
func TestQueueUnitPriorityExample(t *testing.T) {
	applyGuide(t, "elasticquota-priority.yaml")
	applyGuide(t, "queueunit-priority.yaml")
	qu, err := queueUnit(ctx(t), "default", "high-priority-job")
	if err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(qu.Spec.Priority, 0) != 200 || qu.Spec.Queue != "priority-queue" || qu.Spec.ConsumerRef == nil ||
		qu.Spec.ConsumerRef.Name != "important-job" || qu.Spec.Resource.Cpu().Cmp(resource.MustParse("2")) != 0 {
		t.Errorf("high-priority-job spec = %+v", qu.Spec)
	}
	waitPhase(t, "default", "high-priority-job", "given a phase by the scheduler", func(p schedv1alpha1.QueueUnitPhase) bool { return p != "" })
	// A unit the user wrote stays: nothing may remove it because its Job
	// (important-job) does not exist (yet).
	consistently(t, hold, "QueueUnit high-priority-job kept", func(ctx context.Context) error {
		_, err := queueUnit(ctx, "default", "high-priority-job")
		return err
	})
}

// TestAdmissionCheckQueue plays the admission-check example: units of
// checked-queue whose labels match the check's selector wait in Reserved with
// the check Pending until an external controller reports Ready; units that do
// not match are dequeued directly. The units are written by hand (as the
// guide's QueueUnit example is) because only a unit's own labels select checks;
// their consumer is a kind no job extension manages, so only the scheduler
// acts on them (the batch Job extension removes units whose Job is missing).
func TestAdmissionCheckQueue(t *testing.T) {
	applyGuide(t, "queue-admission-check.yaml")
	// The quota that pays for checked-queue's units; its auto-created Queue is
	// the hand-written one, which must keep its admission checks.
	elasticQuota(t, "checked-queue", "10", "20Gi", nil)
	checked := handWrittenUnit("ac-checked", "checked-queue", map[string]string{"requires-provisioning": "true"})
	plain := handWrittenUnit("ac-plain", "checked-queue", nil)
	create(t, checked)
	create(t, plain)

	waitPhase(t, "default", "ac-plain", "dequeued without checks", admitted)
	eventually(t, "ac-checked Reserved with prov-req-check Pending", func(ctx context.Context) (bool, error) {
		qu, err := queueUnit(ctx, "default", "ac-checked")
		if err != nil {
			return false, err
		}
		if qu.Status.Phase != schedv1alpha1.QueueUnitPhaseReserved || len(qu.Status.AdmissionChecks) != 1 ||
			qu.Status.AdmissionChecks[0].Name != "prov-req-check" || qu.Status.AdmissionChecks[0].State != schedv1alpha1.CheckStatePending {
			return false, fmt.Errorf("phase %q, checks %+v", qu.Status.Phase, qu.Status.AdmissionChecks)
		}
		return true, nil
	})
	q := &schedv1alpha1.Queue{}
	if err := get(ctx(t), "koord-queue", "checked-queue", q); err != nil || len(q.Spec.AdmissionChecks) != 1 {
		t.Errorf("checked-queue lost its admission checks once its ElasticQuota appeared: %+v (%v)", q.Spec, err)
	}

	// A ServiceAccount that the chart's policy does not list, even with the
	// writers' RBAC, cannot answer the check.
	create(t, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-unlisted-check-writer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "koord-queue-admission-check-writer"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "unlisted", Namespace: "provisioning"}},
	})
	unlisted := clientAs(t, "system:serviceaccount:provisioning:unlisted")
	answer := func(c client.Client, state schedv1alpha1.AdmissionCheckStateType) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			qu, err := queueUnit(ctx, "default", "ac-checked")
			if err != nil {
				return err
			}
			qu.Status.AdmissionChecks[0].State = state
			qu.Status.AdmissionChecks[0].LastTransitionTime = metav1.Now()
			qu.Status.AdmissionChecks[0].Message = "answered by the e2e test"
			return c.Status().Update(ctx, qu)
		}
	}
	eventually(t, "the unlisted ServiceAccount refused by the status policy", func(ctx context.Context) (bool, error) {
		err := answer(unlisted, schedv1alpha1.CheckStateReady)(ctx)
		if apierrors.IsForbidden(err) && strings.Contains(err.Error(), "QueueUnit status is written only by koord-queue's ServiceAccounts") {
			return true, nil
		}
		if err == nil {
			return false, fmt.Errorf("the unlisted ServiceAccount wrote the check")
		}
		return false, fmt.Errorf("want the policy's refusal: %w", err)
	})

	// The check's controller, under the ServiceAccount the chart's
	// queueUnitStatusPolicy.admissionCheckWriters lists, says Ready.
	provisioner := clientAs(t, "system:serviceaccount:"+strings.Replace(cluster.GuideCheckWriter, "/", ":", 1))
	eventually(t, "check state Ready written by the listed check controller", func(ctx context.Context) (bool, error) {
		return true, answer(provisioner, schedv1alpha1.CheckStateReady)(ctx)
	})
	waitPhase(t, "default", "ac-checked", "dequeued once its check is Ready", isPhase(schedv1alpha1.QueueUnitPhaseDequeued))
}

// clientAs is a client of the suite's admin impersonating user.
func clientAs(t *testing.T, user string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := client.New(cfg, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func handWrittenUnit(name, quota string, labels map[string]string) *schedv1alpha1.QueueUnit {
	l := map[string]string{schedv1alpha1.QuotaNameLabel: quota}
	for k, v := range labels {
		l[k] = v
	}
	one := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	return &schedv1alpha1.QueueUnit{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: l},
		Spec: schedv1alpha1.QueueUnitSpec{
			Queue:       quota,
			ConsumerRef: &corev1.ObjectReference{APIVersion: "e2e.koord-queue.io/v1", Kind: "AdmissionProbe", Name: name, Namespace: "default"},
			Resource:    one,
			PodSet: []schedv1alpha1.PodSet{{Name: "main", Count: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "main", Image: "busybox:stable", Resources: corev1.ResourceRequirements{Requests: one}}},
			}}}},
		},
	}
}
