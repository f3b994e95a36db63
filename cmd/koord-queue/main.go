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

// Command koord-queue is the queue scheduler: it admits QueueUnits under
// ElasticQuota limits.
package main

import (
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/koordinator-sh/koord-queue/pkg/scheduler/app"
	"github.com/koordinator-sh/koord-queue/pkg/util/cli"
)

func main() {
	o := app.NewOptions()
	os.Exit(cli.Command{
		Name:     "koord-queue",
		AddFlags: o.AddFlags,
		Complete: o.Complete,
		Run:      func() error { return app.Run(ctrl.SetupSignalHandler(), o) },
	}.Main(os.Args[1:], os.Stdout, os.Stderr))
}
