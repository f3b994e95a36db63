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

package framework

import (
	"context"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/koordinator-sh/koord-queue/pkg/scheduler/app"
)

// RunScheduler runs koord-queue in-process against cfg with the completed
// options o until the test ends; the returned stop ends it earlier and waits
// until it has stopped (a second call does nothing).
func RunScheduler(t testing.TB, cfg *rest.Config, o *app.Options) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.Background()))
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := app.RunWithConfig(ctx, cfg, o); err != nil {
			t.Errorf("scheduler stopped: %v", err)
		}
	})
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			wg.Wait()
		})
	}
	t.Cleanup(stop)
	return stop
}
