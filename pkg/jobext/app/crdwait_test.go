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
package app

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

// servedMapper serves its kind once served is set.
type servedMapper struct {
	meta.RESTMapper
	served atomic.Bool
	looks  atomic.Int32
}

func (m *servedMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	m.looks.Add(1)
	if m.served.Load() {
		return &meta.RESTMapping{}, nil
	}
	return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
}

// TestCRDWaiter: an extension without its CRD waits, saying so at each look
// with a doubling interval up to the maximum, and is set up once the kind
// is served; a fake clock drives the looks.
func TestCRDWaiter(t *testing.T) {
	ext := &framework.Extension{Name: "tfjob", CRD: "tfjobs.kubeflow.org", GVK: schema.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "TFJob"}}
	mapper := &servedMapper{}
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var mu sync.Mutex
	var lines []string
	log := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, args)
	}, funcr.Options{})
	var setups atomic.Int32
	w := newCRDWaiter(mapper, clk, log, ext, 4*time.Second, func() error { setups.Add(1); return nil })

	done := make(chan error, 1)
	go func() { done <- w.Start(context.Background()) }()
	// Each look waits on the clock; step it by the interval the log names.
	for _, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second} {
		waitFor(t, func() bool { return clk.HasWaiters() })
		mu.Lock()
		last := lines[len(lines)-1]
		mu.Unlock()
		for _, part := range []string{"Extension waits for its CRD", `"extension"="tfjob"`, `"crd"="tfjobs.kubeflow.org"`, `"retryIn"="` + want.String() + `"`} {
			if !strings.Contains(last, part) {
				t.Fatalf("log line %s lacks %s", last, part)
			}
		}
		if setups.Load() != 0 {
			t.Fatal("set up before the CRD is served")
		}
		clk.Step(want)
	}
	mapper.served.Store(true)
	waitFor(t, func() bool { return clk.HasWaiters() || len(done) > 0 })
	clk.Step(4 * time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if setups.Load() != 1 {
		t.Errorf("set up %d times, want once", setups.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	if last := lines[len(lines)-1]; !strings.Contains(last, "CRD installed: starting the extension") {
		t.Errorf("last log line %s", last)
	}
}

// waitFor polls cond with a deadline.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("condition not reached: %v", err)
	}
}
