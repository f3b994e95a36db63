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

package chart

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedv1alpha1 "github.com/koordinator-sh/koord-queue/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// fenceMessage is what the leader fence answers.
const fenceMessage = "does not hold the leader Lease"

// replica is a client acting as a pod of the ServiceAccount sa, as a token
// bound to that pod would make it (user extra pod-name).
func replica(t *testing.T, env *framework.Env, sa, pod string) client.Client {
	t.Helper()
	cfg := impersonate(env.Config, fmt.Sprintf("system:serviceaccount:%s:%s", Namespace, sa))
	cfg.Impersonate.Extra = map[string][]string{"authentication.kubernetes.io/pod-name": {pod}}
	return newClient(t, cfg)
}

// TestLeaderFence installs the chart and plays two replicas of each binary
// on a real kube-apiserver: the API server refuses the QueueUnit status
// writes (koord-queue) and the job resume (koord-queue-controllers) of the
// replica whose pod does not hold the binary's Lease, follows a takeover and
// a release, and never refuses the holder while it renews.
func TestLeaderFence(t *testing.T) {
	env := startControlPlane(t)
	applyChart(t, env, render(t))
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	const ns = "default"
	unit := &schedv1alpha1.QueueUnit{
		ObjectMeta: metav1.ObjectMeta{Name: "fenced", Namespace: ns},
		Spec: schedv1alpha1.QueueUnitSpec{
			Queue:       "team-a",
			ConsumerRef: &corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Name: "fenced", Namespace: ns},
		},
	}
	must(env.Client.Create(ctx, unit))
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "fenced", Namespace: ns},
		Spec: batchv1.JobSpec{
			Suspend: ptr.To(true),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
			}},
		},
	}
	must(env.Client.Create(ctx, job))
	schedLease := lease("koord-queue", "koord-queue-a_1")
	ctrlLease := lease("koord-queue-controllers", "koord-queue-controllers-a_1")
	must(env.Client.Create(ctx, schedLease))
	must(env.Client.Create(ctx, ctrlLease))

	schedA, schedB := replica(t, env, "koord-queue", "koord-queue-a"), replica(t, env, "koord-queue", "koord-queue-b")
	ctrlA, ctrlB := replica(t, env, "koord-queue-controllers", "koord-queue-controllers-a"), replica(t, env, "koord-queue-controllers", "koord-queue-controllers-b")
	admit := func(c client.Client, msg string, opts ...client.SubResourcePatchOption) error {
		return c.Status().Patch(ctx, unit.DeepCopy(), mergePatch(`{"status":{"phase":"Dequeued","message":"`+msg+`"}}`), opts...)
	}
	resume := func(c client.Client, opts ...client.PatchOption) error {
		return c.Patch(ctx, job.DeepCopy(), mergePatch(`{"spec":{"suspend":false}}`), opts...)
	}
	refused := func(what string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), fenceMessage) {
			t.Errorf("%s: got %v, want Forbidden saying %q", what, err, fenceMessage)
		}
	}
	// Policies and their params reach admission through informers: wait,
	// by dry runs, until the fence holds for both binaries.
	settled := func(schedOK, schedNot, ctrlOK, ctrlNot client.Client) {
		t.Helper()
		err := framework.Eventually(ctx, 30*time.Second, func(context.Context) (bool, error) {
			ok := admit(schedOK, "dry", client.DryRunAll) == nil && resume(ctrlOK, client.DryRunAll) == nil
			notErr, ctrlErr := admit(schedNot, "dry", client.DryRunAll), resume(ctrlNot, client.DryRunAll)
			return ok && apierrors.IsForbidden(notErr) && apierrors.IsForbidden(ctrlErr), nil
		})
		if err != nil {
			t.Fatalf("the leader fence did not settle: %v", err)
		}
	}
	settled(schedA, schedB, ctrlA, ctrlB)

	// The holder is never refused while it renews; the other replica always is.
	for i := range 20 {
		renew(t, env, schedLease)
		renew(t, env, ctrlLease)
		if err := admit(schedA, fmt.Sprintf("leader write %d", i)); err != nil {
			t.Fatalf("the leader's write %d after a renewal was refused: %v", i, err)
		}
		if err := resume(ctrlA, client.DryRunAll); err != nil {
			t.Fatalf("the controllers leader's resume %d after a renewal was refused: %v", i, err)
		}
		refused("status write by koord-queue-b", admit(schedB, "stale"))
		refused("resume by koord-queue-controllers-b", resume(ctrlB))
	}
	got := &schedv1alpha1.QueueUnit{}
	must(env.Client.Get(ctx, client.ObjectKeyFromObject(unit), got))
	if got.Status.Message != "leader write 19" {
		t.Errorf("unit message %q, want the leader's last write", got.Status.Message)
	}
	gotJob := &batchv1.Job{}
	must(env.Client.Get(ctx, client.ObjectKeyFromObject(job), gotJob))
	if !ptr.Deref(gotJob.Spec.Suspend, false) {
		t.Error("the job was resumed by a replica that is not the leader")
	}

	// B takes both Leases over: A, paused meanwhile, is refused when it wakes.
	takeOver(t, env, schedLease, "koord-queue-b_2")
	takeOver(t, env, ctrlLease, "koord-queue-controllers-b_2")
	settled(schedB, schedA, ctrlB, ctrlA)
	refused("status write by the deposed koord-queue-a", admit(schedA, "stale"))
	refused("resume by the deposed koord-queue-controllers-a", resume(ctrlA))
	must(resume(ctrlB))

	// Released (an empty holder): nobody writes.
	takeOver(t, env, schedLease, "")
	err := framework.Eventually(ctx, 30*time.Second, func(context.Context) (bool, error) {
		return apierrors.IsForbidden(admit(schedB, "dry", client.DryRunAll)), nil
	})
	if err != nil {
		t.Fatalf("a released Lease still lets its former holder write: %v", err)
	}
	refused("status write after the release", admit(schedB, "released"))

	// A token not bound to a pod (no pod-name) is not fenced by the API
	// server; the replica's own fence still is (pkg/util/fence).
	unbound := newClient(t, impersonate(env.Config, "system:serviceaccount:"+Namespace+":koord-queue"))
	if err := admit(unbound, "unbound"); err != nil {
		t.Errorf("a write with a token bound to no pod was refused: %v", err)
	}
}

func lease(name, holder string) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To[int32](15),
			RenewTime: ptr.To(metav1.NewMicroTime(time.Now())),
		},
	}
}

// renew writes the Lease as its holder's renewal does.
func renew(t *testing.T, env *framework.Env, l *coordinationv1.Lease) {
	t.Helper()
	l.Spec.RenewTime = ptr.To(metav1.NewMicroTime(time.Now()))
	if err := env.Client.Update(t.Context(), l); err != nil {
		t.Fatal(err)
	}
}

// takeOver writes holder into the Lease ("" for a release).
func takeOver(t *testing.T, env *framework.Env, l *coordinationv1.Lease, holder string) {
	t.Helper()
	l.Spec.HolderIdentity = ptr.To(holder)
	renew(t, env, l)
}

// TestLeaderFenceRendering: each binary's fence is rendered with its Lease
// as param, only while its leader election is on, and the value turns both
// off; both pods carry their name for the identity the fence reads.
func TestLeaderFenceRendering(t *testing.T) {
	const sched, ctrl = "koord-queue-leader-fence", "koord-queue-controllers-leader-fence"
	has := func(r *Rendered, name string) bool {
		return r.Find("ValidatingAdmissionPolicy", name) != nil && r.Find("ValidatingAdmissionPolicyBinding", name) != nil
	}
	r := render(t)
	for name, lease := range map[string]string{sched: "koord-queue", ctrl: "koord-queue-controllers"} {
		b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
		r.Into(t, "ValidatingAdmissionPolicyBinding", name, b)
		if b.Spec.ParamRef == nil || b.Spec.ParamRef.Name != lease || b.Spec.ParamRef.Namespace != Namespace {
			t.Errorf("%s: paramRef %+v, want Lease %s/%s", name, b.Spec.ParamRef, Namespace, lease)
		}
	}
	for _, d := range []struct{ deployment, container string }{{"koord-queue", "controller"}, {"koord-queue-controllers", "manager"}} {
		c := container(t, r.deployment(t, d.deployment), d.container)
		found := false
		for _, e := range c.Env {
			found = found || e.Name == "POD_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name"
		}
		if !found {
			t.Errorf("%s: no POD_NAME from metadata.name", d.deployment)
		}
	}
	data, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "config", "policy", "leader-fence.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	config := &Rendered{Raw: string(data), Objects: parseObjects(t, string(data))}
	for _, name := range []string{sched, ctrl} {
		vap, cvap := &admissionregistrationv1.ValidatingAdmissionPolicy{}, &admissionregistrationv1.ValidatingAdmissionPolicy{}
		r.Into(t, "ValidatingAdmissionPolicy", name, vap)
		config.Into(t, "ValidatingAdmissionPolicy", name, cvap)
		if diff := cmp.Diff(cvap.Spec, vap.Spec); diff != "" {
			t.Errorf("%s: chart policy differs from config/policy (-config +chart):\n%s", name, diff)
		}
		b, cb := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
		r.Into(t, "ValidatingAdmissionPolicyBinding", name, b)
		config.Into(t, "ValidatingAdmissionPolicyBinding", name, cb)
		if diff := cmp.Diff(cb.Spec, b.Spec); diff != "" {
			t.Errorf("%s: chart binding differs from config/policy (-config +chart):\n%s", name, diff)
		}
	}
	if r := render(t, "controller.leaderElection.enabled=false"); has(r, sched) || !has(r, ctrl) {
		t.Error("koord-queue's fence does not follow its leader election alone")
	}
	if r := render(t, "extension.koord-queue-controllers.leaderElection.enabled=false"); !has(r, sched) || has(r, ctrl) {
		t.Error("the controllers' fence does not follow their leader election alone")
	}
	if r := render(t, "leaderFencePolicy.enabled=false"); has(r, sched) || has(r, ctrl) {
		t.Error("leaderFencePolicy.enabled=false still renders a fence")
	}
}
