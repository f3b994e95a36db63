// Command koord-queue-controllers runs the job extensions of koord-queue: it
// creates a QueueUnit for every managed job, suspends and resumes jobs as the
// scheduler admits and evicts their units, and reports their pods.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/koordinator-sh/koord-queue/pkg/jobext/app"
	"github.com/koordinator-sh/koord-queue/pkg/version"
)

func main() {
	o := app.NewOptions()
	fs := pflag.NewFlagSet("koord-queue-controllers", pflag.ContinueOnError)
	o.AddFlags(fs)
	showVersion := fs.Bool("version", false, "Print the version, revision and Go version, then exit.")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	if *showVersion {
		fmt.Println("koord-queue-controllers", version.Get())
		return
	}
	if err := app.Run(ctrl.SetupSignalHandler(), o); err != nil {
		fmt.Fprintf(os.Stderr, "koord-queue-controllers: %v\n", err)
		os.Exit(1)
	}
}
