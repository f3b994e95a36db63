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
