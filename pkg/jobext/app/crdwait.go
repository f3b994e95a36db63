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
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/framework"
)

// crdWaitFirstInterval is the first wait between two looks for a CRD; each
// further wait doubles, up to Options.CRDWaitMaxInterval.
const crdWaitFirstInterval = time.Second

// crdWaiter starts an extension whose CRD was not installed when the binary
// started: it looks for the kind with a backoff, saying at each look that
// the extension waits and for which CRD, and sets the extension up on the
// running manager once the API server serves it. The manager's RESTMapper
// asks discovery again for a group it does not know, so a CRD installed
// later is seen.
type crdWaiter struct {
	mapper   meta.RESTMapper
	clk      clock.Clock
	log      logr.Logger
	ext      *framework.Extension
	max      time.Duration
	setup    func() error
	interval time.Duration
}

var _ manager.Runnable = (*crdWaiter)(nil)

func newCRDWaiter(mapper meta.RESTMapper, clk clock.Clock, log logr.Logger, ext *framework.Extension, maxInterval time.Duration, setup func() error) *crdWaiter {
	if maxInterval <= 0 {
		maxInterval = time.Minute
	}
	return &crdWaiter{mapper: mapper, clk: clk, log: log.WithValues("extension", ext.Name, "crd", ext.CRD, "kind", ext.GVK.String()),
		ext: ext, max: maxInterval, setup: setup, interval: min(crdWaitFirstInterval, maxInterval)}
}

// Start waits for the CRD, then sets the extension up; it runs on the
// leader only, like the extension's controller.
func (w *crdWaiter) Start(ctx context.Context) error {
	for {
		served, err := crdServed(w.mapper, w.ext)
		switch {
		case served:
			w.log.Info("CRD installed: starting the extension")
			if err := w.setup(); err != nil {
				return fmt.Errorf("set up extension %s: %w", w.ext.Name, err)
			}
			return nil
		case err != nil:
			w.log.Error(err, "Cannot tell whether the CRD of a waiting extension is installed", "retryIn", w.interval)
		default:
			w.log.Info("Extension waits for its CRD, which is not installed: install it, or remove the extension from --enabled-extensions", "retryIn", w.interval)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-w.clk.After(w.interval):
		}
		w.interval = min(2*w.interval, w.max)
	}
}

// crdServed tells whether the API server serves the extension's kind.
func crdServed(mapper meta.RESTMapper, ext *framework.Extension) (bool, error) {
	_, err := mapper.RESTMapping(ext.GVK.GroupKind(), ext.GVK.Version)
	switch {
	case err == nil:
		return true, nil
	case meta.IsNoMatchError(err):
		return false, nil
	}
	return false, fmt.Errorf("extension %s: look up %s: %w", ext.Name, ext.GVK, err)
}
