// Command koord-queue-controllers runs the job extensions of koord-queue: it
// creates a QueueUnit for every managed job, suspends and resumes jobs as the
// scheduler admits and evicts their units, and reports their pods.
package main

import (
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/app"
	"github.com/koordinator-sh/koord-queue/pkg/util/cli"
)

func main() {
	o := app.NewOptions()
	os.Exit(cli.Command{
		Name:     "koord-queue-controllers",
		AddFlags: o.AddFlags,
		Run:      func() error { return app.Run(ctrl.SetupSignalHandler(), o) },
	}.Main(os.Args[1:], os.Stdout, os.Stderr))
}
