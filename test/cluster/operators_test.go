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

package cluster

import (
	"context"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestTrainerOperator: the trainer controller is known to --operators (and
// to "all"), and its three CRDs are found in the module hack/operators/trainer
// pins.
func TestTrainerOperator(t *testing.T) {
	ops, err := ParseOperators("trainer-controller")
	if err != nil || !slices.Equal(ops, []Operator{TrainerController}) {
		t.Fatalf("ParseOperators(trainer-controller) = %v, %v", ops, err)
	}
	if all, _ := ParseOperators("all"); !slices.Contains(all, TrainerController) || !slices.Contains(all, JobSetController) {
		t.Errorf("all = %v", all)
	}
	if _, err := ParseOperators("trainer"); err == nil || !strings.Contains(err.Error(), "trainer-controller") {
		t.Errorf("an unknown name: %v, want the known ones listed", err)
	}
	_, file, _, _ := runtime.Caller(0)
	files, err := OperatorCRDFiles(context.Background(), filepath.Join(filepath.Dir(file), "..", ".."), TrainerController)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
		if !strings.Contains(f, "trainer/v2@v2.1.0") {
			t.Errorf("CRD %s is not from trainer v2.1.0", f)
		}
	}
	want := []string{"trainer.kubeflow.org_trainjobs.yaml", "trainer.kubeflow.org_clustertrainingruntimes.yaml", "trainer.kubeflow.org_trainingruntimes.yaml"}
	if !slices.Equal(names, want) {
		t.Errorf("CRDs = %v, want %v", names, want)
	}
}
