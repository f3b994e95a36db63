// Command koord-queue is the queue scheduler: it admits QueueUnits under
// ElasticQuota limits.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/koordinator-sh/koord-queue/pkg/scheduler/app"
	"github.com/koordinator-sh/koord-queue/pkg/version"
)

func main() {
	o := app.NewOptions()
	fs := pflag.NewFlagSet("koord-queue", pflag.ContinueOnError)
	o.AddFlags(fs)
	showVersion := fs.Bool("version", false, "Print the version, revision and Go version, then exit.")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "koord-queue:", err)
		os.Exit(2)
	}
	if *showVersion {
		fmt.Println("koord-queue", version.Get())
		return
	}
	if err := o.Complete(); err != nil {
		fmt.Fprintln(os.Stderr, "koord-queue:", err)
		os.Exit(2)
	}
	if err := app.Run(ctrl.SetupSignalHandler(), o); err != nil {
		fmt.Fprintln(os.Stderr, "koord-queue:", err)
		os.Exit(1)
	}
}
