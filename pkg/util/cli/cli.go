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

package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/koordinator-sh/koord-queue/pkg/version"
)

// Exit codes of Main.
const (
	ExitOK         = 0
	ExitRunFailed  = 1
	ExitBadCommand = 2
)

// Command is the command line of one binary.
type Command struct {
	// Name is the binary's name: of its flag set, in its messages and its
	// version line.
	Name string
	// AddFlags registers the binary's flags.
	AddFlags func(*pflag.FlagSet)
	// Complete, if set, checks the parsed flags; its error is a bad command
	// line.
	Complete func() error
	// Run runs the binary until it stops.
	Run func() error
}

// Main parses args (the program name left out), then prints the version
// for --version, or checks the flags and runs. Errors go to stderr, the
// version to stdout; the result is the process's exit code.
func (c Command) Main(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet(c.Name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	c.AddFlags(fs)
	showVersion := fs.Bool("version", false, "Print the version, revision and Go version, then exit.")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return ExitOK
		}
		fmt.Fprintf(stderr, "%s: %v\n", c.Name, err)
		return ExitBadCommand
	}
	if *showVersion {
		fmt.Fprintln(stdout, c.Name, version.Get())
		return ExitOK
	}
	if c.Complete != nil {
		if err := c.Complete(); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", c.Name, err)
			return ExitBadCommand
		}
	}
	if err := c.Run(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", c.Name, err)
		return ExitRunFailed
	}
	return ExitOK
}
