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
package jobext

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	kfv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/app"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// TestExtensionWaitsForItsCRD starts a second control plane with only our
// own CRDs (and ElasticQuota's) and the extensions job and tfjob: the manager starts, Jobs are
// queued while tfjob waits for its CRD, and once the TFJob CRD is installed
// the extension starts and queues a TFJob, with no restart.
func TestExtensionWaitsForItsCRD(t *testing.T) {
	bare := &envtest.Environment{
		CRDDirectoryPaths: []string{filepath.Join(framework.RepoRoot(), "config", "crd", "bases"),
			filepath.Join(framework.RepoRoot(), "config", "crd", "elasticquota")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := bare.Start()
	if err != nil {
		t.Fatalf("start bare control plane: %v", err)
	}
	t.Cleanup(func() { _ = bare.Stop() })

	c, err := client.New(cfg, client.Options{Scheme: app.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "missing-crd-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	stop := runManager(t, cfg, ns.Name, []string{"job", "tfjob"}, func(o *app.Options) { o.CRDWaitMaxInterval = 200 * time.Millisecond })
	t.Cleanup(stop)

	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: ns.Name, Labels: quotaLabels()},
		Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: container("1")}}},
	}
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	waitUnit(t, c, ns.Name, "plain", "the Job's unit while tfjob waits for its CRD", anyUnit)

	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(framework.RepoRoot(), "test", "crds", "kubeflow.org_tfjobs.yaml")}, ErrorIfPathMissing: true,
	}); err != nil {
		t.Fatalf("install the TFJob CRD: %v", err)
	}
	tf := &kfv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Name: "late", Namespace: ns.Name, Labels: quotaLabels()},
		Spec: kfv1.TFJobSpec{
			RunPolicy: kfv1.RunPolicy{Suspend: ptr.To(true)},
			TFReplicaSpecs: map[kfv1.ReplicaType]*kfv1.ReplicaSpec{
				kfv1.TFJobReplicaTypeWorker: {Replicas: ptr.To[int32](1), Template: template("1")},
			},
		},
	}
	if err := c.Create(ctx, tf); err != nil {
		t.Fatal(err)
	}
	waitUnit(t, c, ns.Name, "late-tfjob", "the TFJob's unit once its CRD is installed", anyUnit)
}
