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
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/koordinator-sh/koord-queue/pkg/debugapi"
	"github.com/koordinator-sh/koord-queue/pkg/scheduler"
	"github.com/koordinator-sh/koord-queue/pkg/visibility"
	"github.com/koordinator-sh/koord-queue/pkg/visibility/ui"
)

// addReadAPIs adds the visibility API server and the debug API to mgr when
// their flags ask for them. Both read the scheduler's memory and run on every
// replica (pkg/visibility explains why followers answer the same).
func addReadAPIs(mgr manager.Manager, cfg *rest.Config, s *scheduler.Scheduler, o *Options) error {
	if o.EnableVisibilityServer {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return fmt.Errorf("visibility server client: %w", err)
		}
		opts := visibility.Options{BindAddress: o.VisibilityBindAddress, CertDir: o.VisibilityCertDir, Gates: o.Gates}
		if o.VisibilityUI {
			opts.UI = ui.Handler()
		}
		srv := visibility.NewServer(opts, visibility.FromScheduler(s.View()), cs)
		if err := mgr.Add(srv); err != nil {
			return err
		}
	}
	if o.EnableAPIHandler {
		if err := mgr.Add(debugapi.NewServer(o.APIHandlerAddress, debugapi.FromScheduler(s.View()))); err != nil {
			return err
		}
	}
	return nil
}
