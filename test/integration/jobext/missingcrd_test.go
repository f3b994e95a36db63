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
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/app"
	"github.com/koordinator-sh/koord-queue/test/integration/framework"
)

// TestStartFailsWithoutCRD starts a second control plane with only our own
// CRDs: enabling an extension whose CRD is missing must stop the start with
// a message naming the CRD.
func TestStartFailsWithoutCRD(t *testing.T) {
	bare := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(framework.RepoRoot(), "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := bare.Start()
	if err != nil {
		t.Fatalf("start bare control plane: %v", err)
	}
	t.Cleanup(func() { _ = bare.Stop() })

	o := app.NewOptions()
	o.EnabledExtensions = []string{"job", "tfjob", "workflow"}
	o.LeaderElect = false
	o.MetricsBindAddress, o.HealthProbeBindAddress = "0", "0"
	o.SkipNameValidation = true
	_, err = app.NewManager(cfg, o, clock.RealClock{})
	if err == nil {
		t.Fatal("manager started without the TFJob and Workflow CRDs")
	}
	for _, want := range []string{"tfjobs.kubeflow.org", "workflows.argoproj.io", "extension tfjob", "extension workflow"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "extension job ") {
		t.Errorf("error blames the built-in Job: %v", err)
	}

	o.EnabledExtensions = []string{"job"}
	if _, err := app.NewManager(cfg, o, clock.RealClock{}); err != nil {
		t.Errorf("job alone needs no CRD, got %v", err)
	}
}
