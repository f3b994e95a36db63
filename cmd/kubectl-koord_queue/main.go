// Command kubectl-koord_queue is the kubectl plugin `kubectl koord-queue`
// (pkg/kubectlplugin): put it on PATH and call it through kubectl.
package main

import (
	"fmt"
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/koordinator-sh/koord-queue/pkg/kubectlplugin"
)

func main() {
	cmd := kubectlplugin.NewCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
